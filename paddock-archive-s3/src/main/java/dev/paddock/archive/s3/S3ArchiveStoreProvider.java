package dev.paddock.archive.s3;

import dev.paddock.api.ArchiveStore;
import dev.paddock.api.settings.Setting;
import dev.paddock.api.spi.ArchiveStoreProvider;
import java.util.List;
import java.util.Map;

/** {@code RUNTIME_FILE_ARCHIVE_STORE=s3}; see {@link S3ArchiveConfig#fromSettings}. */
public final class S3ArchiveStoreProvider implements ArchiveStoreProvider {
  @Override
  public List<String> names() {
    return List.of("s3");
  }

  @Override
  public List<Setting<?>> settings() {
    return S3ArchiveConfig.SETTINGS;
  }

  @Override
  public ArchiveStore create(Map<String, String> settings) {
    return S3ArchiveStores.create(S3ArchiveConfig.fromSettings(settings));
  }
}
