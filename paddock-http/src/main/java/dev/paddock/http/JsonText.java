package dev.paddock.http;

import java.util.Arrays;

/**
 * Writes UTF-8 bytes as the body of a JSON string straight into a byte buffer: no decoding to a
 * {@code String} and re-encoding, and ASCII copied as is. This is the hot path of streamed command
 * output. Valid multi-byte sequences are copied unchanged (JSON text is UTF-8); invalid bytes
 * become U+FFFD, so the result is always valid JSON. Not thread-safe: one buffer per writer.
 */
public final class JsonText {
  private static final byte[] HEX =
      "0123456789abcdef".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
  private static final byte[] REPLACEMENT = {(byte) 0xEF, (byte) 0xBF, (byte) 0xBD};

  private byte[] buffer = new byte[1 << 16];
  private int size;

  public void reset() {
    size = 0;
  }

  public byte[] array() {
    return buffer;
  }

  public int size() {
    return size;
  }

  /** Appends ASCII text as is (the caller's own JSON punctuation and field names). */
  public JsonText raw(String ascii) {
    ensure(ascii.length());
    for (int i = 0; i < ascii.length(); i++) {
      buffer[size++] = (byte) ascii.charAt(i);
    }
    return this;
  }

  /** Appends {@code data[offset, offset+length)} escaped for use inside a JSON string. */
  public JsonText escaped(byte[] data, int offset, int length) {
    ensure(length + 16);
    int end = offset + length;
    int i = offset;
    while (i < end) {
      // Copy the longest run of plain printable ASCII in one go: the common case by far.
      int run = i;
      while (run < end && plain(data[run])) {
        run++;
      }
      if (run > i) {
        ensure(run - i);
        System.arraycopy(data, i, buffer, size, run - i);
        size += run - i;
        i = run;
        continue;
      }
      int b = data[i] & 0xFF;
      if (b < 0x80) {
        escapeAscii(b);
        i++;
      } else {
        i = copySequence(data, i, end);
      }
    }
    return this;
  }

  private static boolean plain(byte b) {
    return b >= 0x20 && b != '"' && b != '\\';
  }

  private void escapeAscii(int b) {
    ensure(6);
    buffer[size++] = '\\';
    switch (b) {
      case '"' -> buffer[size++] = '"';
      case '\\' -> buffer[size++] = '\\';
      case '\n' -> buffer[size++] = 'n';
      case '\r' -> buffer[size++] = 'r';
      case '\t' -> buffer[size++] = 't';
      case '\b' -> buffer[size++] = 'b';
      case '\f' -> buffer[size++] = 'f';
      default -> {
        buffer[size++] = 'u';
        buffer[size++] = '0';
        buffer[size++] = '0';
        buffer[size++] = HEX[b >> 4];
        buffer[size++] = HEX[b & 0xF];
      }
    }
  }

  /** Copies one valid UTF-8 sequence starting at {@code i}, or writes U+FFFD for one bad byte. */
  private int copySequence(byte[] data, int i, int end) {
    int b = data[i] & 0xFF;
    int length =
        b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 0;
    if (length > 0
        && i + length <= end
        && continuations(data, i + 1, length - 1)
        && !overlong(data, i, b)) {
      ensure(length);
      System.arraycopy(data, i, buffer, size, length);
      size += length;
      return i + length;
    }
    ensure(3);
    System.arraycopy(REPLACEMENT, 0, buffer, size, 3);
    size += 3;
    return i + 1;
  }

  private static boolean continuations(byte[] data, int from, int count) {
    for (int k = 0; k < count; k++) {
      if ((data[from + k] & 0xC0) != 0x80) {
        return false;
      }
    }
    return true;
  }

  /** Rejects overlong 3/4-byte forms, UTF-16 surrogates and code points above U+10FFFF. */
  private static boolean overlong(byte[] data, int i, int lead) {
    int second = data[i + 1] & 0xFF;
    return (lead == 0xE0 && second < 0xA0)
        || (lead == 0xED && second >= 0xA0)
        || (lead == 0xF0 && second < 0x90)
        || (lead == 0xF4 && second >= 0x90);
  }

  private void ensure(int extra) {
    if (buffer.length - size < extra) {
      buffer = Arrays.copyOf(buffer, Math.max(buffer.length * 2, size + extra));
    }
  }
}
