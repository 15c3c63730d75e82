package dev.paddock.agent.search;

import java.nio.charset.StandardCharsets;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Finds the next match in a region of bytes that holds whole lines. Implementations keep per-search
 * state only in what they return ({@link #copy()} gives each worker its own).
 */
interface LineFinder {
  /** The offset of a match starting in {@code [from, to)} of {@code bytes}, or -1. */
  int find(byte[] bytes, int from, int to);

  /** A finder for another thread. */
  LineFinder copy();

  /**
   * The finder for {@code pattern}: a literal is searched as bytes (Horspool), case-insensitively
   * for ASCII letters; a regular expression (or a case-insensitive non-ASCII literal) runs on the
   * bytes read as Latin-1 when the pattern is ASCII, else on each line decoded from UTF-8.
   */
  static LineFinder of(String pattern, boolean fixedStrings, boolean caseInsensitive) {
    boolean ascii = StandardCharsets.US_ASCII.newEncoder().canEncode(pattern);
    if (fixedStrings && (ascii || !caseInsensitive)) {
      return new Literal(pattern.getBytes(StandardCharsets.UTF_8), caseInsensitive);
    }
    int flags = Pattern.MULTILINE | (caseInsensitive ? Pattern.CASE_INSENSITIVE : 0);
    String regex = fixedStrings ? Pattern.quote(pattern) : pattern;
    if (ascii) {
      return new ByteRegex(Pattern.compile(regex, flags));
    }
    return new DecodedRegex(Pattern.compile(regex, flags | Pattern.UNICODE_CASE));
  }

  /** Boyer-Moore-Horspool over bytes; ASCII case folded when asked. Immutable. */
  final class Literal implements LineFinder {
    private final byte[] needle;
    private final int[] shift = new int[256];
    private final boolean fold;

    /**
     * For exact needles of 4 bytes or more: the shift for each pair of bytes ending the window (0:
     * a candidate), which moves nearly the needle's length at each step, against about half of it
     * for the one-byte table on source text.
     */
    private final short[] pairShift;

    private final int shiftAfterCandidate;

    Literal(byte[] needle, boolean fold) {
      this.fold = fold;
      this.needle = needle.clone();
      if (fold) {
        for (int i = 0; i < needle.length; i++) {
          this.needle[i] = lower(needle[i]);
        }
      }
      int m = needle.length;
      if (!fold && m >= 4 && m < Short.MAX_VALUE) {
        pairShift = new short[1 << 16];
        java.util.Arrays.fill(pairShift, (short) (m - 1));
        int lastPair = pair(needle, m - 2);
        int after = m - 1;
        for (int i = 0; i <= m - 2; i++) {
          pairShift[pair(needle, i)] = (short) (m - 2 - i);
          if (i < m - 2 && pair(needle, i) == lastPair) {
            after = m - 2 - i;
          }
        }
        shiftAfterCandidate = after;
      } else {
        pairShift = null;
        shiftAfterCandidate = 1;
      }
      java.util.Arrays.fill(shift, needle.length);
      for (int i = 0; i < needle.length - 1; i++) {
        int distance = needle.length - 1 - i;
        shift[this.needle[i] & 0xff] = distance;
        if (fold) {
          shift[upper(this.needle[i]) & 0xff] = distance;
        }
      }
    }

    private static int pair(byte[] bytes, int at) {
      return (bytes[at] & 0xff) << 8 | (bytes[at + 1] & 0xff);
    }

    @Override
    public int find(byte[] bytes, int from, int to) {
      if (fold) {
        return findFolded(bytes, from, to);
      }
      return pairShift != null ? findByPairs(bytes, from, to) : findExact(bytes, from, to);
    }

    private int findByPairs(byte[] bytes, int from, int to) {
      byte[] pattern = needle;
      short[] skip = pairShift;
      int m = pattern.length;
      int end = to - m;
      int i = from;
      while (i <= end) {
        int s = skip[(bytes[i + m - 2] & 0xff) << 8 | (bytes[i + m - 1] & 0xff)];
        if (s != 0) {
          i += s;
          continue;
        }
        int j = 0;
        while (j < m - 2 && bytes[i + j] == pattern[j]) {
          j++;
        }
        if (j == m - 2) {
          return i;
        }
        i += shiftAfterCandidate;
      }
      return -1;
    }

    // The hot loop of a literal grep: fields read into locals once, as C1 (the agent's only JIT)
    // does not hoist them out of the loop.
    private int findExact(byte[] bytes, int from, int to) {
      byte[] pattern = needle;
      int[] skip = shift;
      int last = pattern.length - 1;
      byte tail = pattern[last];
      int end = to - last;
      int i = from;
      while (i < end) {
        byte b = bytes[i + last];
        if (b == tail) {
          int j = 0;
          while (j < last && bytes[i + j] == pattern[j]) {
            j++;
          }
          if (j == last) {
            return i;
          }
        }
        i += skip[b & 0xff];
      }
      return -1;
    }

    private int findFolded(byte[] bytes, int from, int to) {
      byte[] pattern = needle;
      int[] skip = shift;
      int last = pattern.length - 1;
      byte tail = pattern[last];
      int end = to - last;
      int i = from;
      while (i < end) {
        byte b = bytes[i + last];
        if (lower(b) == tail) {
          int j = 0;
          while (j < last && lower(bytes[i + j]) == pattern[j]) {
            j++;
          }
          if (j == last) {
            return i;
          }
        }
        i += skip[b & 0xff];
      }
      return -1;
    }

    private static byte lower(byte b) {
      return b >= 'A' && b <= 'Z' ? (byte) (b + 32) : b;
    }

    private static byte upper(byte b) {
      return b >= 'a' && b <= 'z' ? (byte) (b - 32) : b;
    }

    @Override
    public LineFinder copy() {
      return this;
    }
  }

  /** An ASCII regular expression over bytes seen as Latin-1 characters (no decoding). */
  final class ByteRegex implements LineFinder {
    private final Pattern pattern;
    private final Latin1View view = new Latin1View();
    private final Matcher matcher;

    ByteRegex(Pattern pattern) {
      this.pattern = pattern;
      this.matcher = pattern.matcher(view);
    }

    @Override
    public int find(byte[] bytes, int from, int to) {
      view.bytes = bytes;
      view.length = to;
      matcher.reset(view);
      matcher.useAnchoringBounds(false).useTransparentBounds(true).region(from, to);
      return matcher.find() ? matcher.start() : -1;
    }

    @Override
    public LineFinder copy() {
      return new ByteRegex(pattern);
    }
  }

  /** A regular expression run on each line decoded from UTF-8 (for non-ASCII patterns). */
  final class DecodedRegex implements LineFinder {
    private final Pattern pattern;
    private final Matcher matcher;

    DecodedRegex(Pattern pattern) {
      this.pattern = pattern;
      this.matcher = pattern.matcher("");
    }

    @Override
    public int find(byte[] bytes, int from, int to) {
      int start = from;
      while (start < to) {
        int end = start;
        while (end < to && bytes[end] != '\n') {
          end++;
        }
        if (matcher.reset(new String(bytes, start, end - start, StandardCharsets.UTF_8)).find()) {
          return start;
        }
        start = end + 1;
      }
      return -1;
    }

    @Override
    public LineFinder copy() {
      return new DecodedRegex(pattern);
    }
  }

  /** Bytes as a {@link CharSequence} of Latin-1 characters. Reused; not thread-safe. */
  final class Latin1View implements CharSequence {
    byte[] bytes = new byte[0];
    int length;

    @Override
    public int length() {
      return length;
    }

    @Override
    public char charAt(int index) {
      return (char) (bytes[index] & 0xff);
    }

    @Override
    public CharSequence subSequence(int start, int end) {
      return new String(bytes, start, end - start, StandardCharsets.ISO_8859_1);
    }

    @Override
    public String toString() {
      return subSequence(0, length).toString();
    }
  }
}
