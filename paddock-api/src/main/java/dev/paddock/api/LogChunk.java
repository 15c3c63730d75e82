package dev.paddock.api;

import java.util.Objects;

/**
 * A piece of a sandbox's kept log.
 *
 * @param bytes the log's bytes from the offset asked for (UTF-8 text, whole lines unless the log
 *     was cut at its cap)
 * @param nextOffset where the next read continues
 * @param ended whether the sandbox ended (deleted, or no longer live): no line will follow
 */
public record LogChunk(byte[] bytes, long nextOffset, boolean ended) {
  public LogChunk {
    Objects.requireNonNull(bytes, "bytes");
    if (nextOffset < 0) {
      throw new IllegalArgumentException("nextOffset must not be negative, got " + nextOffset);
    }
  }
}
