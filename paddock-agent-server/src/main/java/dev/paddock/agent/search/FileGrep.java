package dev.paddock.agent.search;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Searches one file at a time for matching lines, reading it in blocks of whole lines into one
 * buffer that it reuses (1 MiB, grown up to {@link #MAX_BUFFER} for long lines), so no file is ever
 * decoded or held whole. Each block keeps the lines before it that context needs, and leaves to the
 * next block the matches whose after-context it does not hold yet. A file whose first 8 KiB hold a
 * NUL byte is binary and skipped. A line longer than the largest buffer is searched in pieces. One
 * per worker thread: not thread-safe.
 */
final class FileGrep {
  static final int MAX_BUFFER = 8 << 20;
  private static final int SNIFF_BYTES = 8192;

  /** What one search asks of every file. */
  record Options(int before, int after, int maxLineChars) {}

  /** The matching lines of one file, or none because it is binary. */
  record Result(List<Map<String, Object>> lines, boolean binary, boolean cut) {}

  private final LineFinder finder;
  private final Options options;
  private byte[] buffer = new byte[1 << 20];

  FileGrep(LineFinder finder, Options options) {
    this.finder = finder;
    this.options = options;
  }

  /**
   * Up to {@code max} matching lines of the open file {@code channel} (the caller closes it),
   * reported under {@code shown}.
   */
  Result scan(FileChannel channel, String shown, int max) throws IOException {
    List<Map<String, Object>> found = new ArrayList<>();
    int filled = 0;
    int regionStart = 0;
    long regionLine = 1;
    boolean eof = false;
    boolean sniffed = false;
    while (true) {
      while (!eof && filled < buffer.length) {
        int n = channel.read(ByteBuffer.wrap(buffer, filled, buffer.length - filled));
        if (n < 0) {
          eof = true;
        } else {
          filled += n;
        }
      }
      if (!sniffed && !eof) {
        // A file larger than one block is checked before it is searched; a smaller one only
        // if it matches (below): a file without a match needs no verdict, and the check would
        // cost as much as the search.
        sniffed = true;
        if (hasNul(buffer, Math.min(filled, SNIFF_BYTES))) {
          return new Result(List.of(), true, false);
        }
      }
      boolean pieces = false;
      int end = eof ? filled : lastNewline(buffer, regionStart, filled) + 1;
      int safeEnd = eof ? end : linesBack(buffer, end, options.after(), regionStart);
      if (!eof && safeEnd <= regionStart) {
        if (buffer.length < MAX_BUFFER) {
          buffer = java.util.Arrays.copyOf(buffer, buffer.length * 2);
          continue;
        }
        // One line (with its context) longer than the buffer: searched in pieces.
        end = filled;
        safeEnd = filled;
        pieces = true;
      }
      long line = regionLine;
      int counted = regionStart;
      int position = regionStart;
      while (position < safeEnd && found.size() < max) {
        int match = finder.find(buffer, position, safeEnd);
        if (match < 0) {
          break;
        }
        if (!sniffed) {
          sniffed = true;
          if (hasNul(buffer, Math.min(filled, SNIFF_BYTES))) {
            return new Result(List.of(), true, false);
          }
        }
        int lineStart = lastNewline(buffer, 0, match) + 1;
        int lineEnd = nextNewline(buffer, match, end);
        line += count(buffer, counted, lineStart);
        counted = lineStart;
        found.add(match(shown, line, lineStart, lineEnd, end));
        position = lineEnd + 1;
      }
      if (found.size() >= max) {
        boolean more = position < safeEnd && finder.find(buffer, position, safeEnd) >= 0 || !eof;
        return new Result(found, false, more);
      }
      if (eof && safeEnd >= filled) {
        return new Result(found, false, false);
      }
      line += count(buffer, counted, safeEnd);
      int keepFrom = pieces ? safeEnd : linesBack(buffer, safeEnd, options.before(), 0);
      System.arraycopy(buffer, keepFrom, buffer, 0, filled - keepFrom);
      filled -= keepFrom;
      regionStart = safeEnd - keepFrom;
      regionLine = line;
    }
  }

  private Map<String, Object> match(String shown, long line, int start, int end, int limit) {
    Map<String, Object> match = new LinkedHashMap<>();
    match.put("type", "match");
    match.put("path", shown);
    match.put("line", line);
    Text text = text(start, end);
    match.put("text", text.text());
    if (text.cut()) {
      match.put("line_truncated", true);
    }
    if (options.before() > 0) {
      match.put("before", before(start));
    }
    if (options.after() > 0) {
      match.put("after", after(end, limit));
    }
    return match;
  }

  private List<String> before(int lineStart) {
    List<String> lines = new ArrayList<>();
    int end = lineStart - 1;
    for (int i = 0; i < options.before() && end >= 0; i++) {
      int start = lastNewline(buffer, 0, end) + 1;
      lines.addFirst(text(start, end).text());
      end = start - 1;
    }
    return lines;
  }

  private List<String> after(int lineEnd, int limit) {
    List<String> lines = new ArrayList<>();
    int start = lineEnd + 1;
    for (int i = 0; i < options.after() && start < limit; i++) {
      int end = nextNewline(buffer, start, limit);
      lines.add(text(start, end).text());
      start = end + 1;
    }
    return lines;
  }

  private record Text(String text, boolean cut) {}

  /** The line {@code [start, end)} decoded, without {@code \r}, at most maxLineChars chars. */
  private Text text(int start, int end) {
    int stop = end > start && buffer[end - 1] == '\r' ? end - 1 : end;
    int max = options.maxLineChars();
    boolean cut = stop - start > max * 4L;
    String text =
        new String(buffer, start, Math.min(stop - start, max * 4), StandardCharsets.UTF_8);
    if (text.length() > max) {
      return new Text(text.substring(0, max), true);
    }
    return new Text(text, cut);
  }

  /** The offset of the last {@code \n} in {@code [from, to)}, or {@code from - 1}. */
  private static int lastNewline(byte[] bytes, int from, int to) {
    for (int i = to - 1; i >= from; i--) {
      if (bytes[i] == '\n') {
        return i;
      }
    }
    return from - 1;
  }

  /** The offset of the first {@code \n} in {@code [from, to)}, or {@code to}. */
  private static int nextNewline(byte[] bytes, int from, int to) {
    for (int i = from; i < to; i++) {
      if (bytes[i] == '\n') {
        return i;
      }
    }
    return to;
  }

  /**
   * Where the {@code lines}-th line before {@code end} (a line start) starts, not before {@code
   * floor}; {@code end} itself for 0 lines.
   */
  private static int linesBack(byte[] bytes, int end, int lines, int floor) {
    int start = end;
    for (int i = 0; i < lines && start > floor; i++) {
      start = lastNewline(bytes, floor, start - 1) + 1;
    }
    return Math.max(start, floor);
  }

  private static long count(byte[] bytes, int from, int to) {
    long n = 0;
    for (int i = from; i < to; i++) {
      if (bytes[i] == '\n') {
        n++;
      }
    }
    return n;
  }

  private static boolean hasNul(byte[] bytes, int length) {
    for (int i = 0; i < length; i++) {
      if (bytes[i] == 0) {
        return true;
      }
    }
    return false;
  }
}
