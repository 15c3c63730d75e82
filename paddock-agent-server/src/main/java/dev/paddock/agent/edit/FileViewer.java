package dev.paddock.agent.edit;

import dev.paddock.agent.files.SafeFs;
import dev.paddock.http.HttpError;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * {@code view} of a file: its lines numbered, all of them or a {@code view_range}, read through a
 * {@link LineIndex} so only the lines shown (and at most one stride before them) are read, whatever
 * the file's size. The range rules and messages are OpenHands'. Thread-safe.
 */
final class FileViewer {
  private static final int READ_BYTES = 64 * 1024;

  private final LineIndexCache indexes = new LineIndexCache();

  /**
   * The reply to {@code view} of the regular file placed at {@code at}, opened relative to its
   * parent directory (a link there is refused, never followed).
   */
  Map<String, Object> view(
      SafeFs.Placement at, Optional<List<Long>> range, TextCodec codec, int maxChars)
      throws IOException {
    Path file = at.path();
    try (SafeFs.OpenFile opened = at.parent().open(at.name())) {
      FileChannel channel = opened.channel();
      // Through the same open parent: the version the index is cached under.
      BasicFileAttributes version = at.parent().attributes(at.name());
      requireText(file, channel, codec);
      LineIndex index = indexes.indexOf(file, channel, version);
      long total = index.lineCount();
      Window window = range.map(r -> window(r, total)).orElse(new Window(1, total, ""));
      NumberedLines lines = new NumberedLines(maxChars);
      if (total > 0) {
        readLines(channel, index, window, codec, lines, maxChars);
      }
      Map<String, Object> reply = new LinkedHashMap<>();
      reply.put("command", "view");
      reply.put("path", file.toString());
      reply.put("kind", "file");
      reply.put("output", window.note() + lines.render(file.toString()));
      reply.put("start_line", lines.firstLine((int) window.start()));
      reply.put("end_line", lines.lastLine((int) Math.min(window.end(), total)));
      reply.put("total_lines", total);
      reply.put("truncated", lines.truncated());
      return reply;
    }
  }

  private static void requireText(Path file, FileChannel channel, TextCodec codec)
      throws IOException {
    ByteBuffer head = ByteBuffer.allocate(TextCodec.SNIFF_BYTES);
    while (head.hasRemaining() && channel.read(head, head.position()) > 0) {
      // Reads until the block is full or the file ends.
    }
    codec.requireText(file, head.array(), head.position());
  }

  /** Lines {@code start..end} shown, and the note OpenHands puts first when the end was cut. */
  private record Window(long start, long end, String note) {}

  private static Window window(List<Long> range, long total) {
    if (range.size() != 2) {
      throw invalidRange(range, "It should be a list of two integers.");
    }
    long start = range.get(0);
    long end = range.get(1);
    if (start < 1 || start > total) {
      throw invalidRange(
          range,
          "Its first element `"
              + start
              + "` should be within the range of lines of the file: [1, "
              + total
              + "].");
    }
    String note = "";
    if (end == -1) {
      end = total;
    } else if (end > total) {
      note =
          "NOTE: We only show up to "
              + total
              + " since there're only "
              + total
              + " lines in this file.\n";
      end = total;
    }
    if (end < start) {
      throw invalidRange(
          range,
          "Its second element `"
              + end
              + "` should be greater than or equal to the first element `"
              + start
              + "`.");
    }
    return new Window(start, end, note);
  }

  private static HttpError invalidRange(List<Long> range, String hint) {
    return HttpError.unprocessable("Invalid `view_range` parameter: " + range + ". " + hint);
  }

  /** Feeds lines {@code window.start..end} to {@code out}, starting at the nearest checkpoint. */
  private static void readLines(
      FileChannel channel,
      LineIndex index,
      Window window,
      TextCodec codec,
      NumberedLines out,
      int maxChars)
      throws IOException {
    long line = index.checkpointLine(window.start());
    long position = index.checkpointOffset(window.start());
    // A line longer than this cannot fit the output anyway: the rest of it is skipped, not held.
    int maxLineBytes = maxChars * 4 + 4;
    ByteArrayOutputStream current = new ByteArrayOutputStream(256);
    ByteBuffer buffer = ByteBuffer.allocate(READ_BYTES);
    byte[] bytes = buffer.array();
    boolean more = true;
    for (int n = channel.read(buffer, position); n > 0 && more; ) {
      int from = 0;
      for (int i = 0; i < n && more; i++) {
        if (bytes[i] != '\n') {
          continue;
        }
        if (line >= window.start()) {
          appendCapped(current, bytes, from, i - from, maxLineBytes);
          more = emit(current, line, codec, out) && line < window.end();
        }
        line++;
        from = i + 1;
      }
      if (more && line >= window.start()) {
        appendCapped(current, bytes, from, n - from, maxLineBytes);
      }
      position += n;
      n = more ? channel.read(buffer.clear(), position) : 0;
    }
    if (more && current.size() > 0 && line <= window.end()) {
      emit(current, line, codec, out);
    }
  }

  private static void appendCapped(
      ByteArrayOutputStream line, byte[] bytes, int from, int length, int max) {
    line.write(bytes, from, Math.max(0, Math.min(length, max - line.size())));
  }

  private static boolean emit(
      ByteArrayOutputStream current, long line, TextCodec codec, NumberedLines out) {
    byte[] raw = current.toByteArray();
    int length = raw.length > 0 && raw[raw.length - 1] == '\r' ? raw.length - 1 : raw.length;
    current.reset();
    return out.add((int) line, codec.decode(raw, 0, length));
  }
}
