package dev.paddock.cli;

import dev.paddock.api.settings.CommonSettings;
import dev.paddock.api.settings.Settings;
import dev.paddock.cli.logging.PaddockLogging;
import dev.paddock.runtimeapi.RuntimeApiMain;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code paddock runtime-api}: OpenHands' runtime-API protocol over the local backend {@code
 * RUNTIME} names, on {@code PADDOCK_RUNTIME_API_HOST:PADDOCK_RUNTIME_API_PORT}, behind {@code
 * PADDOCK_RUNTIME_API_KEY}. Settings load as for {@code paddock server} (config file, environment,
 * flags). See docs/REMOTE.md.
 */
@Command(
    mixinStandardHelpOptions = true,
    name = "runtime-api",
    description =
        "Serve OpenHands' runtime API (RUNTIME=remote for an OpenHands app server or another"
            + " Paddock) over a local backend.")
final class RuntimeApiCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  private final Map<String, String> environment;
  private final SettingsCatalog catalog;
  private SettingFlags flags;

  RuntimeApiCommand(Map<String, String> environment, SettingsCatalog catalog) {
    this.environment = Map.copyOf(environment);
    this.catalog = catalog;
  }

  void install(CommandLine line) {
    flags = SettingFlags.install(line, catalog);
  }

  @Override
  public Integer call() throws Exception {
    Map<String, String> given = flags.values(spec);
    Path data = SettingsCatalog.dataDir(environment, given);
    Files.createDirectories(data);
    Settings typed = catalog.load(data, environment, given);
    Map<String, String> settings = new LinkedHashMap<>(typed.values());
    settings.put(CommonSettings.DATA_DIR.name(), data.toString());
    settings.putIfAbsent(
        CommonSettings.HOME.name(),
        System.getProperty("paddock.home", Path.of("").toAbsolutePath().toString()));
    PaddockLogging.configure(settings);
    RuntimeApiMain.serveUntilStopped(settings);
    return 0;
  }
}
