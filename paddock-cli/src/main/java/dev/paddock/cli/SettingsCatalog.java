package dev.paddock.cli;

import dev.paddock.api.settings.CommonSettings;
import dev.paddock.api.settings.Setting;
import dev.paddock.api.settings.SettingSource;
import dev.paddock.api.settings.Settings;
import dev.paddock.api.spi.ArchiveStoreProvider;
import dev.paddock.api.spi.SandboxBackendProvider;
import dev.paddock.controlplane.ArchiveSettings;
import dev.paddock.controlplane.ControlPlaneSettings;
import dev.paddock.controlplane.ForwardedEnvironment;
import dev.paddock.controlplane.ObservabilitySettings;
import dev.paddock.controlplane.QueueSettings;
import dev.paddock.runtimeapi.RuntimeApiSettings;
import java.io.IOException;
import java.io.Reader;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.ServiceLoader;

/**
 * Every setting this build knows, grouped by the component that reads it (the server, the control
 * plane, archives, then each backend and archive store found on the class path), and how they are
 * loaded: {@code <data dir>/paddock.properties}, then the environment, then flags.
 */
final class SettingsCatalog {
  /** A titled group of declarations, as help and {@code paddock config} list them. */
  record Group(String title, List<Setting<?>> settings) {
    Group {
      settings = List.copyOf(settings);
    }
  }

  private final List<Group> groups;

  private SettingsCatalog(List<Group> groups) {
    this.groups = List.copyOf(groups);
  }

  /** The declarations of this build. */
  static SettingsCatalog discover() {
    List<Group> groups = new ArrayList<>();
    List<Setting<?>> server = new ArrayList<>(ServerSettings.ALL);
    server.addAll(CommonSettings.ALL);
    groups.add(new Group("Server", server));
    groups.add(new Group("Control plane", ControlPlaneSettings.ALL));
    groups.add(new Group("Start queue", QueueSettings.ALL));
    groups.add(new Group("Usage, logs and reaping", ObservabilitySettings.ALL));
    groups.add(new Group("Sandbox gateway", GatewaySettings.ALL));
    groups.add(new Group("HTTPS (API and gateway)", TlsSettings.ALL));
    groups.add(new Group("Forwarded into sandboxes", ForwardedEnvironment.SETTINGS));
    groups.add(new Group("Workspace archives", ArchiveSettings.ALL));
    groups.add(new Group("Runtime API (paddock runtime-api)", RuntimeApiSettings.ALL));
    for (ArchiveStoreProvider store : ServiceLoader.load(ArchiveStoreProvider.class)) {
      groups.add(new Group("Archive store " + store.names().get(0), store.settings()));
    }
    for (SandboxBackendProvider backend : ServiceLoader.load(SandboxBackendProvider.class)) {
      groups.add(new Group("Backend " + backend.names().get(0), backend.settings()));
    }
    return new SettingsCatalog(groups.stream().filter(g -> !g.settings().isEmpty()).toList());
  }

  List<Group> groups() {
    return groups;
  }

  List<Setting<?>> all() {
    List<Setting<?>> all = new ArrayList<>();
    groups.forEach(g -> all.addAll(g.settings()));
    return all;
  }

  /**
   * Resolves every declared setting.
   *
   * @throws dev.paddock.api.settings.SettingsException naming every invalid value
   */
  Settings load(Path dataDir, Map<String, String> environment, Map<String, String> flags) {
    return Settings.builder()
        .declare(all())
        .knownElsewhere(ServerSettings.KNOWN_ELSEWHERE)
        .source(SettingSource.FILE, file(dataDir.resolve("paddock.properties")))
        .source(SettingSource.ENV, environment)
        .source(SettingSource.FLAG, flags)
        .build();
  }

  /** The data directory, which holds the config file: a flag, else the environment, else ~. */
  static Path dataDir(Map<String, String> environment, Map<String, String> flags) {
    Settings early =
        Settings.builder()
            .declare(List.of(CommonSettings.DATA_DIR))
            .source(SettingSource.ENV, environment)
            .source(SettingSource.FLAG, flags)
            .build();
    return CommonSettings.dataDir(early);
  }

  private static Map<String, String> file(Path file) {
    Map<String, String> values = new LinkedHashMap<>();
    if (!Files.isReadable(file)) {
      return values;
    }
    Properties properties = new Properties();
    try (Reader reader = Files.newBufferedReader(file)) {
      properties.load(reader);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    }
    properties.forEach((k, v) -> values.put(k.toString(), v.toString()));
    return values;
  }
}
