package dev.paddock.controlplane;

import dev.paddock.api.ArchiveStore;
import dev.paddock.api.settings.Settings;
import dev.paddock.api.spi.ArchiveStoreProvider;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;

/** The archive stores that come with the control plane, and the one the settings choose. */
public final class ArchiveStores {
  /** The setting that names the store; {@code directory} when unset. */
  public static final String STORE_SETTING = ArchiveSettings.STORE.name();

  private ArchiveStores() {}

  /**
   * A store in the local directory {@code root} (created when missing): one file per key, written
   * to a temporary file beside it and renamed into place.
   */
  public static ArchiveStore directory(Path root) {
    return new DirectoryArchiveStore(root.toAbsolutePath().normalize());
  }

  /**
   * The store named by {@code RUNTIME_FILE_ARCHIVE_STORE} ({@code directory} by default), found
   * among the {@link ArchiveStoreProvider}s on the class path and created from {@code settings}.
   *
   * @throws IllegalArgumentException when no provider has that name or a setting is wrong
   */
  public static ArchiveStore fromSettings(Map<String, String> settings) {
    String name = Settings.of(List.of(ArchiveSettings.STORE), settings).get(ArchiveSettings.STORE);
    List<String> known = new ArrayList<>();
    for (ArchiveStoreProvider provider : ServiceLoader.load(ArchiveStoreProvider.class)) {
      if (provider.names().contains(name)) {
        return provider.create(settings);
      }
      known.addAll(provider.names());
    }
    throw new IllegalArgumentException(
        "unknown " + STORE_SETTING + " '" + name + "'; this build has " + known);
  }
}
