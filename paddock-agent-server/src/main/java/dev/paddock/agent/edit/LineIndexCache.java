package dev.paddock.agent.edit;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The line indexes of the few large files viewed last, so repeated range views of one file do not
 * rescan it. Small files are indexed afresh each time (cheaper than keeping them). An entry is used
 * only while its file is the version it was built from. Thread-safe: one lock around the map;
 * building an index happens outside it.
 */
final class LineIndexCache {
  /** Below this, scanning the file costs less than the cache entry is worth. */
  private static final long CACHED_FROM_BYTES = 256 * 1024;

  private static final int MAX_FILES = 32;

  /** Guarded by this. Access order: the eldest is the least recently viewed. */
  private final Map<Path, LineIndex> indexes =
      new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<Path, LineIndex> eldest) {
          return size() > MAX_FILES;
        }
      };

  LineIndex indexOf(Path file, FileChannel channel, BasicFileAttributes version)
      throws IOException {
    if (version.size() < CACHED_FROM_BYTES) {
      return LineIndex.build(channel, version);
    }
    synchronized (this) {
      LineIndex known = indexes.get(file);
      if (known != null && known.isFor(version)) {
        return known;
      }
    }
    LineIndex built = LineIndex.build(channel, version);
    synchronized (this) {
      indexes.put(file, built);
    }
    return built;
  }
}
