package dev.paddock.agent.files;

import dev.paddock.agent.AgentConfig;
import dev.paddock.agent.git.GitArchive;
import dev.paddock.agent.user.CommandUser;
import dev.paddock.http.Call;
import dev.paddock.http.HttpError;
import dev.paddock.http.JsonBody;
import dev.paddock.http.Router;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The OpenHands file routes under {@code /api/file}: upload, download, create_directory and
 * archive. Every path is checked by a {@link PathGuard} against {@link AgentConfig#fileRoots()}.
 * Files stream through fixed-size buffers in both directions, so their size is bounded by the disk
 * only. Errors are {@code {"detail": ...}}: 400 bad path or input, 403 outside the roots or no
 * permission, 404 missing, 422 missing or unknown parameter.
 */
public final class FileRoutes {
  private static final int COPY_BUFFER_BYTES = 64 * 1024;
  private static final Set<String> PATH_ONLY = Set.of("path");
  private static final Map<String, Boolean> SUCCESS = Map.of("success", true);

  private final PathGuard guard;
  private final CommandUser user;

  private FileRoutes(PathGuard guard, CommandUser user) {
    this.guard = guard;
    this.user = user;
  }

  /**
   * Registers the routes; files and directories they create are owned by {@code user} (see {@link
   * CommandUser#own}).
   */
  public static void register(Router router, AgentConfig config, CommandUser user) {
    PathGuard guard = new PathGuard(config.fileRoots());
    FileRoutes routes = new FileRoutes(guard, user);
    router
        .add("POST", "/api/file/upload", routes::upload)
        .add("GET", "/api/file/download", routes::download)
        .add("POST", "/api/file/create_directory", routes::createDirectory)
        .add(
            "GET",
            "/api/file/archive",
            new ArchiveRoute(guard, config.workspace(), GitArchive.create(user))::handle);
  }

  /**
   * {@code POST /api/file/upload?path=} with multipart field {@code file}: streamed to a staged
   * file beside the target, renamed over it once the whole body has parsed; missing parents are
   * created. Other fields are read past and ignored; a second {@code file} field too.
   */
  private void upload(Call call) throws IOException {
    call.allowQuery(PATH_ONLY);
    Path target = guard.resolve(call.requiredQuery("path"));
    if (Files.isDirectory(target)) {
      throw HttpError.badRequest("'" + target + "' is a directory");
    }
    MultipartReader parts =
        new MultipartReader(call.body(), MultipartReader.boundaryOf(call.contentType()));
    try {
      receive(parts, call.body(), target, user);
    } catch (FileSystemException e) {
      throw FileErrors.translate(e);
    }
    call.sendJson(200, SUCCESS);
  }

  private static void receive(
      MultipartReader parts, InputStream body, Path target, CommandUser user) throws IOException {
    StagedFile staged = null;
    try {
      for (var part = parts.next(); part.isPresent(); part = parts.next()) {
        if (staged == null && part.get().name().equals("file")) {
          staged = StagedFile.create(target, user);
          staged.write(part.get().body());
        }
      }
      if (staged == null) {
        throw HttpError.unprocessable("multipart field 'file' is required");
      }
      requireEndOfBody(body);
      staged.commit();
    } finally {
      if (staged != null) {
        staged.close();
      }
    }
  }

  /**
   * Reads past the closing boundary to the end of the request body, so a body shorter than its
   * Content-Length fails here (the body stream throws) and the upload is not committed (D12).
   */
  private static void requireEndOfBody(InputStream body) throws IOException {
    if (body.skip(MAX_EPILOGUE) >= MAX_EPILOGUE && body.read() >= 0) {
      throw HttpError.badRequest(
          "more than " + MAX_EPILOGUE + " bytes after the closing multipart boundary");
    }
  }

  private static final long MAX_EPILOGUE = 64 << 10;

  /**
   * {@code GET /api/file/download?path=}: the file's bytes as {@code application/octet-stream} with
   * its Content-Length as of opening. A file that shrinks while being sent ends the response early
   * (the client sees a short body) rather than sending bytes that were never there.
   */
  private void download(Call call) throws IOException {
    call.allowQuery(PATH_ONLY);
    String requested = call.requiredQuery("path");
    Path file = guard.resolve(requested);
    try (FileChannel channel = openRegularFile(file);
        InputStream in = Channels.newInputStream(channel)) {
      long size = channel.size();
      // The name asked for, not the name of a link's target.
      String name = Path.of(requested).normalize().getFileName().toString();
      call.setHeader("Content-Disposition", ContentDisposition.attachment(name));
      if (size == 0) {
        call.setHeader("Content-Type", "application/octet-stream");
        call.send(200, new byte[0]);
        return;
      }
      try (OutputStream out = call.stream(200, "application/octet-stream", size)) {
        long sent = copyUpTo(in, out, size);
        if (sent < size) {
          throw new IOException(file + " shrank to " + sent + " bytes while being sent");
        }
      }
    }
  }

  /** Copies until {@code limit} bytes or the end of {@code in}; returns the bytes copied. */
  private static long copyUpTo(InputStream in, OutputStream out, long limit) throws IOException {
    byte[] buffer = new byte[COPY_BUFFER_BYTES];
    long copied = 0;
    while (copied < limit) {
      int n = in.read(buffer, 0, (int) Math.min(buffer.length, limit - copied));
      if (n < 0) {
        break;
      }
      out.write(buffer, 0, n);
      copied += n;
    }
    return copied;
  }

  private static FileChannel openRegularFile(Path file) throws IOException {
    try {
      BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class);
      if (attributes.isDirectory()) {
        throw HttpError.badRequest("'" + file + "' is a directory; use /api/file/archive");
      }
      if (!attributes.isRegularFile()) {
        // A FIFO or device could block forever or never end.
        throw HttpError.badRequest("'" + file + "' is not a regular file");
      }
      return FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
    } catch (FileSystemException e) {
      throw FileErrors.translate(e);
    }
  }

  /**
   * {@code POST /api/file/create_directory}: {@code path} from the query or a JSON body {@code
   * {"path": ...}}; {@code mkdir -p}, succeeding when the directory already exists. The command
   * user owns the directories it creates.
   */
  private void createDirectory(Call call) throws IOException {
    call.allowQuery(PATH_ONLY);
    Path dir = guard.resolve(pathParameter(call));
    if (Files.exists(dir) && !Files.isDirectory(dir)) {
      throw HttpError.badRequest("'" + dir + "' exists and is not a directory");
    }
    try {
      user.createDirectories(dir);
    } catch (FileSystemException e) {
      throw FileErrors.translate(e);
    }
    call.sendJson(200, SUCCESS);
  }

  private static String pathParameter(Call call) throws IOException {
    Optional<String> query = call.query("path");
    if (query.isPresent()) {
      return query.get();
    }
    byte[] body = call.smallBody();
    if (body.length == 0) {
      throw HttpError.unprocessable(
          "'path' is required, as a query parameter or a JSON body {\"path\": ...}");
    }
    return JsonBody.parse(body, PATH_ONLY).requiredString("path");
  }
}
