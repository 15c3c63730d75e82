package dev.paddock.controlplane;

import dev.paddock.api.ArchiveStore;
import dev.paddock.api.settings.CommonSettings;
import dev.paddock.api.settings.Setting;
import dev.paddock.api.settings.Settings;
import dev.paddock.api.spi.ArchiveStoreProvider;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The embedded default store, {@code RUNTIME_FILE_ARCHIVE_STORE=directory}: {@code
 * PADDOCK_ARCHIVE_DIR}, else {@code <data dir>/archives}.
 */
public final class DirectoryArchiveStoreProvider implements ArchiveStoreProvider {
  static final Setting<Path> DIR =
      Setting.path("PADDOCK_ARCHIVE_DIR", "the directory archive store's root")
          .withDefaultText("<data dir>/archives");

  @Override
  public List<Setting<?>> settings() {
    return List.of(DIR);
  }

  @Override
  public List<String> names() {
    return List.of("directory");
  }

  @Override
  public ArchiveStore create(Map<String, String> settings) {
    Settings s = Settings.of(List.of(DIR, CommonSettings.DATA_DIR), settings);
    return ArchiveStores.directory(
        s.find(DIR).orElseGet(() -> CommonSettings.dataDir(s).resolve("archives")));
  }
}
