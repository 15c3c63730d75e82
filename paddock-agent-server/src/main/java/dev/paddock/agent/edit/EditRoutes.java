package dev.paddock.agent.edit;

import dev.paddock.agent.core.AgentConfig;
import dev.paddock.agent.files.SafeFs;
import dev.paddock.agent.files.SafeFs.Placement;
import dev.paddock.agent.user.CommandUser;
import dev.paddock.http.Call;
import dev.paddock.http.HttpError;
import dev.paddock.http.Router;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * {@code POST /api/file/edit}: OpenHands' file editor tool ({@code view}, {@code create}, {@code
 * str_replace}, {@code insert}, {@code undo_edit}) as one route whose JSON body is the tool call's
 * arguments. Replies carry the text the tool would show the model in {@code output}, plus
 * structured fields; errors are {@code {"detail"}} with OpenHands' wording. Paths go through the
 * allowed roots through {@link SafeFs}: each command works on the file's parent directory as opened
 * by its walk, so a directory swapped for a link meanwhile cannot send a read or a write outside
 * the roots.
 */
public final class EditRoutes {
  /** OpenHands' {@code MAX_FILE_SIZE_MB}: larger files are viewed in ranges, not edited. */
  static final long MAX_EDIT_BYTES = 10L << 20;

  /** Disk the undo history may use in all. */
  static final long HISTORY_BYTES = 64L << 20;

  private static final Set<String> NO_QUERY = Set.of();

  private final SafeFs fs;
  private final FileViewer viewer = new FileViewer();
  private final Editor editor;

  private EditRoutes(SafeFs fs, Editor editor) {
    this.fs = fs;
    this.editor = editor;
  }

  /**
   * Registers the route. Undo history is spooled under {@code config.eventsDir()}; files the editor
   * creates belong to {@code user}.
   */
  public static void register(Router router, AgentConfig config, CommandUser user) {
    EditHistory history =
        new EditHistory(config.eventsDir().resolve("edit-history"), HISTORY_BYTES);
    SafeFs fs = SafeFs.create(config.fileRoots(), user);
    Editor editor = new Editor(new AtomicReplace(fs), history, MAX_EDIT_BYTES);
    EditRoutes routes = new EditRoutes(fs, editor);
    router.add("POST", "/api/file/edit", routes::edit);
  }

  private void edit(Call call) throws IOException {
    call.allowQuery(NO_QUERY);
    EditRequest request = EditRequest.parse(call.smallBody());
    requireAbsolute(request.path());
    TextCodec codec = request.encoding().map(TextCodec::named).orElse(TextCodec.UTF_8);
    try {
      call.sendJson(200, run(request, codec));
    } catch (Editor.NotUnique e) {
      Map<String, Object> error = new LinkedHashMap<>();
      error.put("detail", e.getMessage());
      error.put("occurrences", e.occurrences);
      error.put("lines", e.lines);
      call.sendJson(409, error);
    } catch (FileSystemException e) {
      throw translate(e);
    }
  }

  private static void requireAbsolute(String path) {
    if (!path.startsWith("/")) {
      throw HttpError.badRequest(
          "Invalid `path` parameter: "
              + path
              + ". The path should be an absolute path, starting with `/`.");
    }
  }

  private Map<String, Object> run(EditRequest request, TextCodec codec) throws IOException {
    if (request.command().equals("view")) {
      return view(request, codec);
    }
    try (Placement at = place(request.path(), request.command().equals("create"))) {
      return edit(request, at, codec);
    }
  }

  /** The file's placement; a missing parent directory is OpenHands' "does not exist". */
  private Placement place(String path, boolean createParents) throws IOException {
    try {
      return fs.place(path, createParents);
    } catch (HttpError e) {
      if (e.status() == 404) {
        throw Editor.missing(Path.of(path).normalize());
      }
      if (e.status() == 400 && fs.stat(path, true).type() == SafeFs.FileType.DIRECTORY) {
        throw Editor.isDirectory(Path.of(path).normalize());
      }
      throw e;
    }
  }

  private Map<String, Object> edit(EditRequest request, Placement file, TextCodec codec)
      throws IOException {
    int max = request.maxOutputChars();
    return switch (request.command()) {
      case "create" ->
          editor.create(
              file,
              request.required(
                  request.fileText(),
                  "file_text",
                  "`create` writes a NEW file and needs `file_text` with its full content. If the"
                      + " file already exists, use `str_replace` (requires `old_str` copied from a"
                      + " prior `view`) or `insert`."),
              request.overwrite(),
              codec);
      case "str_replace" ->
          editor.strReplace(
              file,
              request.required(
                  request.oldStr(),
                  "old_str",
                  "To replace text, first run `view` on the file and copy `old_str` EXACTLY from"
                      + " its output, including all whitespace. To insert new content after a"
                      + " known line, use `insert`; to create a new file, use `create`."),
              request.required(
                  request.newStr(),
                  "new_str",
                  "`str_replace` needs `new_str` (the replacement text). It may be an empty"
                      + " string (\"\") to delete the text matched by `old_str`."),
              codec,
              max);
      case "insert" ->
          editor.insert(
              file,
              request
                  .insertLine()
                  .orElseThrow(
                      () ->
                          request.parameterMissing(
                              "insert_line",
                              "`insert` places text AFTER the given line number; provide"
                                  + " `insert_line` (0 inserts before the first line) and"
                                  + " `new_str`.")),
              request.required(
                  request.newStr(),
                  "new_str",
                  "`insert` needs `new_str` (the text to insert after `insert_line`)."),
              codec,
              max);
      case "undo_edit" -> editor.undo(file, codec, max);
      default -> throw new IllegalStateException("unchecked command " + request.command());
    };
  }

  private Map<String, Object> view(EditRequest request, TextCodec codec) throws IOException {
    Path file = Path.of(request.path()).normalize();
    SafeFs.FileEntry entry;
    try {
      entry = fs.stat(request.path(), true);
    } catch (HttpError e) {
      throw e.status() == 404 ? Editor.missing(file) : e;
    }
    if (entry.type() == SafeFs.FileType.DIRECTORY) {
      if (request.viewRange().isPresent()) {
        throw HttpError.unprocessable(
            "Invalid `view_range` parameter: "
                + request.viewRange().get()
                + ". The `view_range` parameter is not allowed when `path` points to a"
                + " directory.");
      }
      try (SafeFs.Directory dir = fs.directory(request.path())) {
        return DirectoryViewer.view(dir, request.maxOutputChars());
      }
    }
    if (entry.type() != SafeFs.FileType.FILE) {
      throw HttpError.badRequest(
          "Invalid `path` parameter: "
              + entry.path()
              + ". It is not a regular file or a directory.");
    }
    try (Placement at = fs.place(request.path(), false)) {
      return viewer.view(at, request.viewRange(), codec, request.maxOutputChars());
    }
  }

  /** File-system failures the client can act on; the rest is a 500 naming the file. */
  private static HttpError translate(FileSystemException e) {
    String file = e.getFile() == null ? "the path" : "'" + e.getFile() + "'";
    String reason = e.getReason() == null ? "" : e.getReason().toLowerCase(Locale.ROOT);
    if (e instanceof AccessDeniedException) {
      return new HttpError(403, "permission denied on " + file);
    }
    if (e instanceof NoSuchFileException) {
      return HttpError.notFound(file + " does not exist");
    }
    if (reason.contains("not a directory")) {
      return HttpError.badRequest("a parent of " + file + " is not a directory");
    }
    if (reason.contains("file name too long")) {
      // ENAMETOOLONG: a name over the file system's limit (255 bytes) is the request's fault.
      return HttpError.badRequest("a name in " + file + " is longer than the file system allows");
    }
    if (reason.contains("no space left") || reason.contains("quota")) {
      return new HttpError(507, "no space left to write " + file);
    }
    if (reason.contains("read-only file system")) {
      return new HttpError(403, file + " is on a read-only file system");
    }
    return new HttpError(500, "file system error on " + file + ": " + e.getReason());
  }
}
