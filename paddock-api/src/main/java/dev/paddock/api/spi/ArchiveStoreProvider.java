package dev.paddock.api.spi;

import dev.paddock.api.ArchiveStore;
import dev.paddock.api.settings.Setting;
import java.util.List;
import java.util.Map;

/**
 * Registers an {@link ArchiveStore} under its {@code RUNTIME_FILE_ARCHIVE_STORE} names; found with
 * {@link java.util.ServiceLoader}, so a store with heavy dependencies (S3) lives in its own module
 * and is only loaded when chosen.
 */
public interface ArchiveStoreProvider {
  /** The names that select this store, e.g. {@code ["directory"]}. */
  List<String> names();

  /** The settings this store reads (for help, {@code paddock config} and typo warnings). */
  default List<Setting<?>> settings() {
    return List.of();
  }

  /**
   * Creates the store. Secrets among the settings (credentials) must never appear in an exception
   * message or a log line.
   *
   * @param settings the control plane's settings (environment and config file, flattened), with the
   *     data directory set
   * @throws IllegalArgumentException when a setting is missing or malformed; the message names it
   */
  ArchiveStore create(Map<String, String> settings);
}
