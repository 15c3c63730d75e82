package dev.paddock.api;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Where workspace archives and their manifests are kept: a flat key space of immutable objects, as
 * in object storage. Keys are {@code /}-separated relative paths of {@code [A-Za-z0-9._-]}
 * segments; no segment is {@code .} or {@code ..}. Implementations are thread-safe; a reader never
 * sees a partly written object. {@link #close} releases what the store holds (connections); the
 * code that created a store closes it.
 */
public interface ArchiveStore extends AutoCloseable {
  /**
   * Stores the content of {@code file} under {@code key}, replacing what was there, all at once
   * (readers see the old object or the whole new one). The file is left where it is.
   *
   * @throws IOException when the object could not be stored
   */
  void put(String key, Path file) throws IOException;

  /** The keys that start with {@code prefix}, sorted; empty when there are none. */
  List<String> list(String prefix) throws IOException;

  /** The object under {@code key}, to be closed by the caller; empty when there is none. */
  Optional<InputStream> open(String key) throws IOException;

  /** The size in bytes of the object under {@code key}; empty when there is none. */
  Optional<Long> size(String key) throws IOException;

  /** Releases the store's resources; the default holds none. */
  @Override
  default void close() {}

  /**
   * Returns {@code key} when it is a well-formed key (see above).
   *
   * @throws IllegalArgumentException when it is not
   */
  static String requireValidKey(String key) {
    if (!ArchiveKeys.KEY.matcher(key).matches() || ArchiveKeys.DOTS.matcher(key).find()) {
      throw new IllegalArgumentException("malformed archive key '" + key + "'");
    }
    return key;
  }
}
