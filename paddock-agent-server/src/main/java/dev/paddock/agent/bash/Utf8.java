package dev.paddock.agent.bash;

/** UTF-8 boundary arithmetic, so output chunks never split a character. */
final class Utf8 {
  private Utf8() {}

  /**
   * How many bytes at the end of {@code data[offset, offset+length)} form an incomplete character
   * (0 to 3): those are held back until the rest of the character arrives.
   */
  static int incompleteTail(byte[] data, int offset, int length) {
    int end = offset + length;
    for (int back = 1; back <= Math.min(3, length); back++) {
      int b = data[end - back] & 0xFF;
      if ((b & 0xC0) == 0x80) {
        continue; // continuation byte: keep looking for the lead byte
      }
      int needed = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 1;
      return needed > back ? back : 0;
    }
    return 0;
  }
}
