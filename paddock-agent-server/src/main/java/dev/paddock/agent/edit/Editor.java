package dev.paddock.agent.edit;

import dev.paddock.agent.files.SafeFs;
import dev.paddock.agent.files.SafeFs.Placement;
import dev.paddock.http.HttpError;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The editing commands of OpenHands' file editor on placed files ({@link SafeFs.Placement}: read,
 * staged and renamed relative to the file's open parent directory, never by path): {@code create},
 * {@code str_replace}, {@code insert} and {@code undo_edit}, with its rules and wording, working on
 * the file's bytes (no decoding of the whole file) and keeping its line endings, its
 * trailing-newline state, its mode and its owner. Edits of one file are serialised (striped locks),
 * so two agents editing it at once cannot lose either edit. Thread-safe.
 */
final class Editor {
  /** Lines shown around an edit, as OpenHands' {@code SNIPPET_CONTEXT_WINDOW}. */
  static final int SNIPPET_CONTEXT = 4;

  private final AtomicReplace writer;
  private final EditHistory history;
  private final long maxFileBytes;
  private final ReentrantLock[] locks = new ReentrantLock[64];

  Editor(AtomicReplace writer, EditHistory history, long maxFileBytes) {
    this.writer = writer;
    this.history = history;
    this.maxFileBytes = maxFileBytes;
    for (int i = 0; i < locks.length; i++) {
      locks[i] = new ReentrantLock();
    }
  }

  /** A text file read whole: its bytes, its version, its line ending. */
  private record Text(byte[] bytes, int length, Fingerprint version, LineEnding ending) {
    int lines() {
      return Bytes.lineCount(bytes, length);
    }

    boolean endsWithNewline() {
      return length > 0 && bytes[length - 1] == '\n';
    }
  }

  @FunctionalInterface
  interface Edit {
    Map<String, Object> apply() throws IOException;
  }

  Map<String, Object> locked(Placement at, Edit edit) throws IOException {
    ReentrantLock lock = locks[Math.floorMod(at.path().hashCode(), locks.length)];
    lock.lock();
    try {
      return edit.apply();
    } finally {
      lock.unlock();
    }
  }

  Map<String, Object> create(Placement at, String fileText, boolean overwrite, TextCodec codec)
      throws IOException {
    return locked(at, () -> createLocked(at, fileText, overwrite, codec));
  }

  private Map<String, Object> createLocked(
      Placement at, String fileText, boolean overwrite, TextCodec codec) throws IOException {
    Path file = at.path();
    byte[] content = codec.encode(fileText);
    Optional<BasicFileAttributes> existing = attributes(at);
    if (existing.isPresent() && existing.get().isDirectory()) {
      throw isDirectory(file);
    }
    Fingerprint after;
    if (existing.isEmpty()) {
      try {
        after = writer.create(at, content);
      } catch (FileAlreadyExistsException e) {
        throw exists(file);
      }
      history.saved(file, Optional.empty(), 0, Fingerprint.ABSENT, after);
    } else if (!overwrite) {
      throw exists(file);
    } else {
      requireRegular(file, existing.get());
      byte[] before = readCapped(at, existing.get());
      after = writer.replace(at, content, content.length);
      history.saved(
          file, Optional.of(before), before.length, Fingerprint.of(existing.get()), after);
    }
    Map<String, Object> reply = reply("create", file, existing.isPresent());
    reply.put("output", "File created successfully at: " + file);
    reply.put("total_lines", Bytes.lineCount(content, content.length));
    reply.put("undo_depth", history.depth(file));
    return reply;
  }

  Map<String, Object> strReplace(
      Placement at, String oldStr, String newStr, TextCodec codec, int maxChars)
      throws IOException {
    if (oldStr.isEmpty()) {
      throw HttpError.unprocessable(
          "Invalid `old_str` parameter: it is empty. Copy the text to replace exactly from a"
              + " `view` of the file; to add text, use `insert`.");
    }
    if (oldStr.equals(newStr)) {
      throw HttpError.unprocessable(
          "Invalid `new_str` parameter: "
              + newStr
              + ". No replacement was performed. `new_str` and `old_str` must be different.");
    }
    return locked(at, () -> strReplaceLocked(at, oldStr, newStr, codec, maxChars));
  }

  private Map<String, Object> strReplaceLocked(
      Placement at, String oldStr, String newStr, TextCodec codec, int maxChars)
      throws IOException {
    Path file = at.path();
    Text text = read(at, codec);
    byte[] needle = codec.encode(text.ending().apply(oldStr));
    byte[] replacement = codec.encode(text.ending().apply(newStr));
    List<Integer> found = Bytes.occurrences(text.bytes(), text.length(), needle);
    if (found.size() != 1) {
      throw new NotUnique(file, oldStr, found.size(), Bytes.lineNumbers(text.bytes(), found));
    }
    int offset = found.get(0);
    byte[] edited = splice(text, offset, needle.length, replacement);
    save(at, text, edited);
    int line = 1 + Bytes.count(text.bytes(), 0, offset, (byte) '\n');
    int start = Math.max(1, line - SNIPPET_CONTEXT);
    int end = line + SNIPPET_CONTEXT + (int) newStr.chars().filter(c -> c == '\n').count();
    int startOffset = Bytes.lineStartBefore(edited, offset, line - start);
    Map<String, Object> reply = reply("str_replace", file, true);
    NumberedLines shown = snippetLines(edited, startOffset, start, end, codec, maxChars);
    int shownEnd = shown.lastLine(start);
    reply.put(
        "output",
        "The file "
            + file
            + " has been edited. "
            + shown.render("a snippet of " + file)
            + "Review the changes and make sure they are as expected. Edit the file again if"
            + " necessary.");
    reply.put("line", line);
    reply.put("snippet_start_line", start);
    reply.put("snippet_end_line", shownEnd);
    reply.put("undo_depth", history.depth(file));
    return reply;
  }

  Map<String, Object> insert(
      Placement at, long insertLine, String newStr, TextCodec codec, int maxChars)
      throws IOException {
    return locked(at, () -> insertLocked(at, insertLine, newStr, codec, maxChars));
  }

  private Map<String, Object> insertLocked(
      Placement at, long insertLine, String newStr, TextCodec codec, int maxChars)
      throws IOException {
    Path file = at.path();
    Text text = read(at, codec);
    int lines = text.lines();
    if (insertLine < 0 || insertLine > lines) {
      throw HttpError.unprocessable(
          "Invalid `insert_line` parameter: "
              + insertLine
              + ". It should be within the range of allowed values: [0, "
              + lines
              + "]");
    }
    String eol = text.ending().text();
    String inserted = text.ending().apply(newStr);
    boolean atUnterminatedEnd = insertLine == lines && text.length() > 0 && !text.endsWithNewline();
    if (atUnterminatedEnd) {
      // The file had no newline at its end, and keeps having none.
      inserted =
          eol
              + (inserted.endsWith(eol)
                  ? inserted.substring(0, inserted.length() - eol.length())
                  : inserted);
    } else if (!inserted.endsWith("\n")) {
      inserted = inserted + eol;
    }
    int offset = Bytes.lineStart(text.bytes(), text.length(), (int) insertLine + 1);
    byte[] edited = splice(text, offset, 0, codec.encode(inserted));
    save(at, text, edited);
    int added =
        newStr.endsWith("\n") ? newStr.split("\n", -1).length - 1 : newStr.split("\n", -1).length;
    int start = (int) Math.max(1, insertLine - SNIPPET_CONTEXT + 1);
    int end = (int) insertLine + SNIPPET_CONTEXT + added;
    Map<String, Object> reply = reply("insert", file, true);
    reply.put(
        "output",
        "The file "
            + file
            + " has been edited. "
            + snippet(
                edited,
                Bytes.lineStart(edited, edited.length, start),
                start,
                end,
                codec,
                maxChars,
                "a snippet of the edited file")
            + "Review the changes and make sure they are as expected (correct indentation, no"
            + " duplicate lines, etc). Edit the file again if necessary.");
    reply.put("line", insertLine + 1);
    reply.put("lines_inserted", added);
    finish(reply, file, edited, start, end);
    return reply;
  }

  Map<String, Object> undo(Placement at, TextCodec codec, int maxChars) throws IOException {
    return locked(at, () -> undoLocked(at, codec, maxChars));
  }

  private Map<String, Object> undoLocked(Placement at, TextCodec codec, int maxChars)
      throws IOException {
    Path file = at.path();
    Fingerprint current = Fingerprint.of(at);
    EditHistory.Previous previous =
        history
            .last(file, current)
            .orElseThrow(() -> HttpError.conflict("No edit history found for " + file + "."));
    Map<String, Object> reply = reply("undo_edit", file, true);
    if (previous.content().isEmpty()) {
      writer.delete(at);
      history.undone(file, Fingerprint.ABSENT);
      reply.put(
          "output",
          "Last edit to "
              + file
              + " undone successfully: the file did not exist before it was created, so it was"
              + " removed.");
      reply.put("removed", true);
      reply.put("undo_depth", history.depth(file));
      return reply;
    }
    byte[] content = previous.content().get();
    Fingerprint restored = writer.replace(at, content, content.length);
    history.undone(file, restored);
    int lines = Bytes.lineCount(content, content.length);
    reply.put(
        "output",
        "Last edit to "
            + file
            + " undone successfully. "
            + snippet(content, 0, 1, lines, codec, maxChars, file.toString()));
    reply.put("removed", false);
    finish(reply, file, content, 1, lines);
    return reply;
  }

  private void save(Placement at, Text before, byte[] edited) throws IOException {
    Fingerprint after = writer.replace(at, edited, edited.length);
    history.saved(at.path(), Optional.of(before.bytes()), before.length(), before.version(), after);
  }

  private void finish(Map<String, Object> reply, Path file, byte[] content, int start, int end) {
    int lines = Bytes.lineCount(content, content.length);
    reply.put("snippet_start_line", Math.min(start, Math.max(lines, 1)));
    reply.put("snippet_end_line", Math.min(end, lines));
    reply.put("total_lines", lines);
    reply.put("undo_depth", history.depth(file));
  }

  private static Map<String, Object> reply(String command, Path file, boolean prevExist) {
    Map<String, Object> reply = new LinkedHashMap<>();
    reply.put("command", command);
    reply.put("path", file.toString());
    reply.put("prev_exist", prevExist);
    return reply;
  }

  private static byte[] splice(Text text, int at, int removed, byte[] inserted) {
    byte[] edited = new byte[text.length() - removed + inserted.length];
    System.arraycopy(text.bytes(), 0, edited, 0, at);
    System.arraycopy(inserted, 0, edited, at, inserted.length);
    System.arraycopy(
        text.bytes(), at + removed, edited, at + inserted.length, text.length() - at - removed);
    return edited;
  }

  /**
   * Lines {@code start..end} of {@code content}, numbered, under OpenHands' heading; {@code
   * position} is where line {@code start} begins.
   */
  private static String snippet(
      byte[] content,
      int position,
      int start,
      int end,
      TextCodec codec,
      int maxChars,
      String what) {
    return snippetLines(content, position, start, end, codec, maxChars).render(what);
  }

  private static NumberedLines snippetLines(
      byte[] content, int position, int start, int end, TextCodec codec, int maxChars) {
    NumberedLines lines = new NumberedLines(maxChars);
    for (int line = start; line <= end && position < content.length; line++) {
      int newline = position;
      while (newline < content.length && content[newline] != '\n') {
        newline++;
      }
      int stop = newline > position && content[newline - 1] == '\r' ? newline - 1 : newline;
      if (!lines.add(line, codec.decode(content, position, stop - position))) {
        break;
      }
      position = newline + 1;
    }
    return lines;
  }

  /** The whole text file, refused when missing (404), not regular (400), too large or binary. */
  private Text read(Placement at, TextCodec codec) throws IOException {
    Path file = at.path();
    BasicFileAttributes attributes = attributes(at).orElseThrow(() -> missing(file));
    requireRegular(file, attributes);
    byte[] bytes = readCapped(at, attributes);
    codec.requireText(file, bytes, Math.min(bytes.length, TextCodec.SNIFF_BYTES));
    return new Text(
        bytes, bytes.length, Fingerprint.of(attributes), LineEnding.of(bytes, bytes.length));
  }

  private byte[] readCapped(Placement at, BasicFileAttributes attributes) throws IOException {
    Path file = at.path();
    if (attributes.size() > maxFileBytes) {
      throw HttpError.unprocessable(
          "File validation failed for "
              + file
              + ": File is too large ("
              + String.format("%.1f", attributes.size() / 1048576.0)
              + "MB). Maximum allowed size is "
              + maxFileBytes / 1048576
              + "MB. View it in ranges with `view_range`, and edit it with a command such as"
              + " `sed -i`.");
    }
    try (SafeFs.OpenFile opened = at.parent().open(at.name())) {
      var channel = opened.channel();
      ByteBuffer buffer = ByteBuffer.allocate((int) attributes.size());
      while (buffer.hasRemaining() && channel.read(buffer) > 0) {
        // Until full or the end: a file that shrank meanwhile is taken as it is now.
      }
      if (channel.read(ByteBuffer.allocate(1)) > 0) {
        // Writing back what was read would cut off what another process appended.
        throw HttpError.conflict(file + " grew while being read; retry the edit.");
      }
      return buffer.position() == buffer.capacity()
          ? buffer.array()
          : java.util.Arrays.copyOf(buffer.array(), buffer.position());
    }
  }

  private static Optional<BasicFileAttributes> attributes(Placement at) throws IOException {
    try {
      return Optional.of(at.parent().attributes(at.name()));
    } catch (NoSuchFileException e) {
      return Optional.empty();
    }
  }

  private static void requireRegular(Path file, BasicFileAttributes attributes) {
    if (attributes.isDirectory()) {
      throw isDirectory(file);
    }
    if (!attributes.isRegularFile()) {
      throw HttpError.badRequest(
          "Invalid `path` parameter: "
              + file
              + ". It is not a regular file (a FIFO, socket or"
              + " device).");
    }
  }

  static HttpError missing(Path file) {
    return HttpError.notFound(
        "Invalid `path` parameter: "
            + file
            + ". The path "
            + file
            + " does not exist. Please provide a valid path.");
  }

  static HttpError isDirectory(Path file) {
    return HttpError.badRequest(
        "Invalid `path` parameter: "
            + file
            + ". The path "
            + file
            + " is a directory and only the `view` command can be used on directories.");
  }

  private static HttpError exists(Path file) {
    return HttpError.conflict(
        "Invalid `path` parameter: "
            + file
            + ". File already exists at: "
            + file
            + ". Cannot overwrite files using command `create`; set `overwrite` to true, or edit"
            + " it with `str_replace` or `insert`.");
  }

  /** {@code old_str} occurs zero times or more than once: 409 with the count and the lines. */
  static final class NotUnique extends RuntimeException {
    private static final long serialVersionUID = 1L;

    final int occurrences;
    final transient List<Integer> lines;

    NotUnique(Path file, String oldStr, int occurrences, List<Integer> lines) {
      super(message(file, oldStr, occurrences, lines), null, false, false);
      this.occurrences = occurrences;
      this.lines = lines;
    }

    private static String message(Path file, String oldStr, int count, List<Integer> lines) {
      oldStr = oldStr.length() > 1000 ? oldStr.substring(0, 1000) + "…" : oldStr;
      if (count == 0) {
        return "No replacement was performed, old_str `"
            + oldStr
            + "` did not appear verbatim in "
            + file
            + ".";
      }
      return "No replacement was performed. Multiple occurrences of old_str `"
          + oldStr
          + "` in lines "
          + lines.stream().distinct().toList()
          + " ("
          + count
          + " occurrences). Please ensure it is unique.";
    }
  }
}
