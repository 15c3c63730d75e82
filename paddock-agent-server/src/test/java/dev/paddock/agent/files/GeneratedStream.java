package dev.paddock.agent.files;

import java.io.InputStream;
import java.util.SplittableRandom;
import java.util.zip.CRC32C;

/**
 * A deterministic stream of {@code size} pseudo-random bytes, generated as it is read so tests can
 * move hundreds of MiB without holding them. Every byte value occurs.
 */
final class GeneratedStream extends InputStream {
  private static final int BLOCK = 64 * 1024;
  private final byte[] block = new byte[BLOCK];
  private final long size;
  private long position;

  GeneratedStream(long size, long seed) {
    this.size = size;
    new SplittableRandom(seed).nextBytes(block);
  }

  /** The CRC-32C of the {@code size} bytes this stream produces. */
  static long checksum(long size, long seed) {
    CRC32C crc = new CRC32C();
    byte[] buffer = new byte[BLOCK];
    try (GeneratedStream in = new GeneratedStream(size, seed)) {
      for (int n = in.read(buffer, 0, BLOCK); n > 0; n = in.read(buffer, 0, BLOCK)) {
        crc.update(buffer, 0, n);
      }
    }
    return crc.getValue();
  }

  @Override
  public int read() {
    byte[] one = new byte[1];
    return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
  }

  @Override
  public int read(byte[] b, int off, int len) {
    if (position >= size) {
      return -1;
    }
    int offset = (int) (position % BLOCK);
    int n = (int) Math.min(Math.min(len, BLOCK - offset), size - position);
    // Each block is the random block xor-ed with its index, so blocks differ from one another.
    byte salt = (byte) (position / BLOCK);
    for (int i = 0; i < n; i++) {
      b[off + i] = (byte) (block[offset + i] ^ salt);
    }
    position += n;
    return n;
  }

  @Override
  public void close() {}
}
