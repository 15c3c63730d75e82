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
 * sees a partly written object.
 */
public interface ArchiveStore {
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
}
