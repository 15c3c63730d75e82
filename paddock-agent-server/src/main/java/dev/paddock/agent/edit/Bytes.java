package dev.paddock.agent.edit;

import java.util.ArrayList;
import java.util.List;

/** Searching and line counting on the bytes of a file held in memory (at most the edit limit). */
final class Bytes {
  private Bytes() {}

  /** The first index at or after {@code from} where {@code needle} starts, or -1. */
  static int indexOf(byte[] haystack, int length, byte[] needle, int from) {
    if (needle.length == 0) {
      return -1;
    }
    byte first = needle[0];
    int last = length - needle.length;
    for (int i = from; i <= last; i++) {
      if (haystack[i] == first && regionMatches(haystack, i, needle)) {
        return i;
      }
    }
    return -1;
  }

  private static boolean regionMatches(byte[] haystack, int at, byte[] needle) {
    for (int j = 1; j < needle.length; j++) {
      if (haystack[at + j] != needle[j]) {
        return false;
      }
    }
    return true;
  }

  /** Start offsets of the non-overlapping occurrences of {@code needle}, as Python's finditer. */
  static List<Integer> occurrences(byte[] haystack, int length, byte[] needle) {
    List<Integer> found = new ArrayList<>();
    for (int at = indexOf(haystack, length, needle, 0);
        at >= 0;
        at = indexOf(haystack, length, needle, at + needle.length)) {
      found.add(at);
    }
    return found;
  }

  /** The 1-based line number of each offset (sorted ascending), in one pass. */
  static List<Integer> lineNumbers(byte[] bytes, List<Integer> sortedOffsets) {
    List<Integer> lines = new ArrayList<>(sortedOffsets.size());
    int line = 1;
    int position = 0;
    for (int offset : sortedOffsets) {
      line += count(bytes, position, offset, (byte) '\n');
      position = offset;
      lines.add(line);
    }
    return lines;
  }

  static int count(byte[] bytes, int from, int to, byte value) {
    int n = 0;
    for (int i = from; i < to; i++) {
      if (bytes[i] == value) {
        n++;
      }
    }
    return n;
  }

  /** Lines as {@code wc -l} plus a last line without a newline: "a\nb" and "a\nb\n" have 2. */
  static int lineCount(byte[] bytes, int length) {
    int newlines = count(bytes, 0, length, (byte) '\n');
    return length > 0 && bytes[length - 1] != '\n' ? newlines + 1 : newlines;
  }

  /**
   * The offset where line {@code line} (1-based) starts; {@code length} for the line after the
   * last.
   */
  static int lineStart(byte[] bytes, int length, int line) {
    int seen = 1;
    for (int i = 0; i < length && seen < line; i++) {
      if (bytes[i] == '\n') {
        seen++;
        if (seen == line) {
          return i + 1;
        }
      }
    }
    return line <= 1 ? 0 : length;
  }
}
