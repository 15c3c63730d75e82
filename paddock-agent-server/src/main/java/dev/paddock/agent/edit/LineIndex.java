package dev.paddock.agent.edit;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Arrays;
import java.util.Objects;

/**
 * Where every 1024th line of a file starts, and how many lines it has: built by one sequential
 * read, so viewing a range in the middle of a large file reads at most 1023 lines before it. Valid
 * for the file version it was built from (size, modification time and inode); {@link
 * #isFor(BasicFileAttributes)} tells whether the file is still that version. Immutable.
 */
final class LineIndex {
  static final int STRIDE = 1024;
  private static final int READ_BYTES = 1 << 20;

  private final long size;
  private final long modifiedNanos;
  private final Object fileKey;
  private final long[] checkpoints;
  private final long lineCount;

  private LineIndex(BasicFileAttributes version, long[] checkpoints, long lineCount) {
    this.size = version.size();
    this.modifiedNanos = nanos(version);
    this.fileKey = version.fileKey();
    this.checkpoints = checkpoints;
    this.lineCount = lineCount;
  }

  /** Reads {@code channel} from the start to its end. */
  static LineIndex build(FileChannel channel, BasicFileAttributes version) throws IOException {
    long[] checkpoints = new long[16];
    int count = 1;
    long newlines = 0;
    long position = 0;
    byte last = '\n';
    ByteBuffer buffer = ByteBuffer.allocate(READ_BYTES);
    byte[] bytes = buffer.array();
    for (int n = channel.read(buffer, 0); n > 0; n = channel.read(buffer.clear(), position)) {
      for (int i = 0; i < n; i++) {
        if (bytes[i] == '\n' && ++newlines % STRIDE == 0) {
          if (count == checkpoints.length) {
            checkpoints = Arrays.copyOf(checkpoints, count * 2);
          }
          checkpoints[count++] = position + i + 1;
        }
      }
      last = bytes[n - 1];
      position += n;
    }
    long lines = position > 0 && last != '\n' ? newlines + 1 : newlines;
    return new LineIndex(version, Arrays.copyOf(checkpoints, count), lines);
  }

  boolean isFor(BasicFileAttributes version) {
    return version.size() == size
        && nanos(version) == modifiedNanos
        && Objects.equals(version.fileKey(), fileKey);
  }

  long lineCount() {
    return lineCount;
  }

  /** The last indexed line at or before {@code line} (1-based). */
  long checkpointLine(long line) {
    return ((line - 1) / STRIDE) * STRIDE + 1;
  }

  /** The byte offset where {@link #checkpointLine(long)} starts. */
  long checkpointOffset(long line) {
    return checkpoints[(int) ((line - 1) / STRIDE)];
  }

  private static long nanos(BasicFileAttributes version) {
    return version.lastModifiedTime().to(java.util.concurrent.TimeUnit.NANOSECONDS);
  }
}
