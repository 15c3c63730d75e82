package dev.paddock.archive.s3;

import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import software.amazon.awssdk.http.ContentStreamProvider;

/**
 * One part of a file as a request body the SDK may read more than once (to sign it, then to send
 * it, or on a retry): every {@link #newStream} opens the file afresh at the part's offset and
 * closes the stream handed out before. Not thread-safe; one part upload uses it at a time.
 */
final class FileSlice implements ContentStreamProvider, AutoCloseable {
  private final Path file;
  private final long offset;
  private final long length;
  private InputStream current;

  FileSlice(Path file, long offset, long length) {
    this.file = file;
    this.offset = offset;
    this.length = length;
  }

  @Override
  public InputStream newStream() {
    closeCurrent();
    try {
      FileChannel channel = FileChannel.open(file, StandardOpenOption.READ).position(offset);
      current = new Bounded(Channels.newInputStream(channel), length);
      return current;
    } catch (IOException e) {
      throw new java.io.UncheckedIOException("cannot read part of " + file, e);
    }
  }

  @Override
  public void close() {
    closeCurrent();
  }

  private void closeCurrent() {
    if (current != null) {
      try {
        current.close();
      } catch (IOException e) {
        // A read-only file: nothing was written that closing could lose.
      }
      current = null;
    }
  }

  /** Ends after {@code remaining} bytes. */
  private static final class Bounded extends FilterInputStream {
    private long remaining;

    Bounded(InputStream in, long remaining) {
      super(in);
      this.remaining = remaining;
    }

    @Override
    public int read() throws IOException {
      if (remaining <= 0) {
        return -1;
      }
      int b = super.read();
      if (b >= 0) {
        remaining--;
      }
      return b;
    }

    @Override
    public int read(byte[] buffer, int off, int len) throws IOException {
      if (remaining <= 0) {
        return -1;
      }
      int n = super.read(buffer, off, (int) Math.min(len, remaining));
      if (n > 0) {
        remaining -= n;
      }
      return n;
    }

    @Override
    public long skip(long n) throws IOException {
      long skipped = super.skip(Math.min(n, remaining));
      remaining -= skipped;
      return skipped;
    }

    @Override
    public int available() throws IOException {
      return (int) Math.min(super.available(), remaining);
    }

    @Override
    public boolean markSupported() {
      return false;
    }
  }
}
