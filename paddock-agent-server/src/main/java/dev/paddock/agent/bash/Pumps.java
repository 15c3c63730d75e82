package dev.paddock.agent.bash;

import java.io.IOException;
import java.io.InputStream;

/** Reads a child's output stream in chunks and hands each chunk on, until end of stream. */
final class Pumps {
  static final int CHUNK = 64 << 10;

  private Pumps() {}

  /** Receives chunks; the array is reused after the call returns. */
  @FunctionalInterface
  interface Sink {
    void accept(byte[] data, int offset, int length);
  }

  /** Pumps run on pool threads, one pump per thread at a time: each thread keeps its buffer. */
  private static final ThreadLocal<byte[]> BUFFERS = ThreadLocal.withInitial(() -> new byte[CHUNK]);

  static void pump(InputStream in, Sink sink) {
    byte[] buffer = BUFFERS.get();
    try (in) {
      int n;
      while ((n = in.read(buffer)) >= 0) {
        if (n > 0) {
          sink.accept(buffer, 0, n);
        }
      }
    } catch (IOException e) {
      // Stream closed under us (process gone or agent shutting down): the output ends here.
    }
  }
}
