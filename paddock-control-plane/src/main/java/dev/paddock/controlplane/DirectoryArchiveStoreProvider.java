package dev.paddock.controlplane;

import dev.paddock.api.ArchiveStore;
import dev.paddock.api.spi.ArchiveStoreProvider;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The embedded default store, {@code RUNTIME_FILE_ARCHIVE_STORE=directory}: {@code
 * PADDOCK_ARCHIVE_DIR}, else {@code <data dir>/archives}.
 */
public final class DirectoryArchiveStoreProvider implements ArchiveStoreProvider {
  @Override
  public List<String> names() {
    return List.of("directory");
  }

  @Override
  public ArchiveStore create(Map<String, String> settings) {
    String dir = settings.get("PADDOCK_ARCHIVE_DIR");
    if (dir == null || dir.isBlank()) {
      String data = settings.get("paddock.data-dir");
      if (data == null) {
        throw new IllegalArgumentException("set PADDOCK_ARCHIVE_DIR or the data directory");
      }
      return ArchiveStores.directory(Path.of(data).resolve("archives"));
    }
    return ArchiveStores.directory(Path.of(dir.trim()));
  }
}
