package dev.paddock.http;

import java.io.IOException;
import java.io.OutputStream;

/**
 * The socket's output stream, timing each write so the server's watchdog can close a connection
 * whose client stopped reading (a blocking socket write has no timeout of its own).
 */
final class WireOutput extends OutputStream {
  private final OutputStream out;
  private volatile long writeStartedNanos; // 0 when no write is in progress

  WireOutput(OutputStream out) {
    this.out = out;
  }

  /** Whether a write has been blocked since before {@code cutoffNanos}. */
  boolean stuckSince(long cutoffNanos) {
    long started = writeStartedNanos;
    return started != 0 && started - cutoffNanos < 0;
  }

  @Override
  public void write(int b) throws IOException {
    write(new byte[] {(byte) b}, 0, 1);
  }

  @Override
  public void write(byte[] data, int offset, int length) throws IOException {
    writeStartedNanos = System.nanoTime() | 1; // never 0 while writing
    try {
      out.write(data, offset, length);
    } finally {
      writeStartedNanos = 0;
    }
  }

  @Override
  public void flush() throws IOException {
    out.flush();
  }

  @Override
  public void close() throws IOException {
    out.close();
  }
}
