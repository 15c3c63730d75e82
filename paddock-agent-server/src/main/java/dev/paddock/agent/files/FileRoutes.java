package dev.paddock.agent.files;

import dev.paddock.agent.AgentConfig;
import dev.paddock.agent.files.SafeFs.FileEntry;
import dev.paddock.agent.files.SafeFs.OpenFile;
import dev.paddock.agent.git.GitArchive;
import dev.paddock.agent.user.CommandUser;
import dev.paddock.backend.kit.protocol.AgentProtocol;
import dev.paddock.http.Call;
import dev.paddock.http.HttpError;
import dev.paddock.http.JsonBody;
import dev.paddock.http.Router;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystemException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The file routes under {@code /api/file}: OpenHands' upload, download, create_directory and
 * archive, and Paddock's list, stat, move, copy, delete, chmod and directory upload and download as
 * tar. Every path goes through one {@link SafeFs} confined to {@link AgentConfig#fileRoots()},
 * which resolves and opens without a window for a racing process to redirect it. Files stream
 * through fixed-size buffers in both directions. Errors are {@code {"detail": ...}}: 400 bad path
 * or input or wrong type, 403 outside the roots or no permission, 404 missing, 409 exists, not
 * empty or changed meanwhile, 422 missing or unknown parameter.
 */
public final class FileRoutes {
  private static final int COPY_BUFFER_BYTES = 64 * 1024;
  private static final int MAX_EPILOGUE_BYTES = 64 * 1024;
  private static final Set<String> PATH_ONLY = Set.of("path");
  private static final Map<String, Boolean> SUCCESS = Map.of("success", true);

  private final SecureFs fs;
  private final CommandUser user;

  private FileRoutes(SecureFs fs, CommandUser user) {
    this.fs = fs;
    this.user = user;
  }

  /**
   * Registers the routes; files and directories they create are owned by {@code user} (see {@link
   * CommandUser#own}).
   */
  public static void register(Router router, AgentConfig config, CommandUser user) {
    SecureFs fs = SecureFs.create(config.fileRoots(), user);
    FileRoutes routes = new FileRoutes(fs, user);
    router
        .add("POST", "/api/file/upload", translated(routes::upload))
        .add("GET", "/api/file/download", translated(routes::download))
        .add("POST", "/api/file/create_directory", translated(routes::createDirectory))
        .add("GET", "/api/file/list", translated(routes::list))
        .add("GET", "/api/file/stat", translated(routes::stat))
        .add("POST", "/api/file/move", translated(routes::move))
        .add("POST", "/api/file/copy", translated(routes::copy))
        .add("POST", "/api/file/delete", translated(routes::delete))
        .add("POST", "/api/file/chmod", translated(routes::chmod))
        .add("POST", "/api/file/upload_tar", translated(routes::uploadTar))
        .add("GET", "/api/file/download_tar", translated(routes::downloadTar))
        .add(
            "GET",
            AgentProtocol.ARCHIVE,
            translated(new ArchiveRoute(fs, config.workspace(), GitArchive.create(user))::handle));
  }

  /** A file-system failure not already mapped becomes the status a client can act on. */
  private static Router.Route translated(Router.Route route) {
    return call -> {
      try {
        route.handle(call);
      } catch (FileSystemException e) {
        throw FileErrors.translate(e);
      }
    };
  }

  /**
   * {@code POST /api/file/upload?path=[&mode=]} with multipart field {@code file} (and optionally a
   * field {@code mode}): streamed to a staged file beside the target, renamed over it once the
   * whole body has been read to its end; missing parents are created. Other fields are read past
   * and ignored; a second {@code file} field too.
   */
  private void upload(Call call) throws IOException {
    call.allowQuery(Set.of("path", "mode"));
    String path = call.requiredQuery("path");
    Optional<Integer> mode = call.query("mode").map(m -> Modes.parse("mode", m));
    MultipartReader parts =
        new MultipartReader(call.body(), MultipartReader.boundaryOf(call.contentType()));
    ClientPath.parse(path);
    receiveInto(parts, path, mode);
    call.sendJson(200, SUCCESS);
  }

  private void receiveInto(MultipartReader parts, String path, Optional<Integer> queryMode)
      throws IOException {
    Optional<Integer> mode = queryMode;
    SafeFs.PendingFile staged = null;
    try {
      for (var part = parts.next(); part.isPresent(); part = parts.next()) {
        String name = part.get().name();
        if (staged == null && name.equals("file")) {
          staged = fs.write(path, true);
          part.get().body().transferTo(staged.out());
        } else if (name.equals("mode") && queryMode.isEmpty()) {
          String text = new String(part.get().body().readNBytes(16), StandardCharsets.UTF_8);
          mode = Optional.of(Modes.parse("mode", text.strip()));
        }
      }
      if (staged == null) {
        throw HttpError.unprocessable("multipart field 'file' is required");
      }
      // To the end of the body: a body shorter than its Content-Length fails here, uncommitted.
      parts.finish(MAX_EPILOGUE_BYTES);
      if (mode.isPresent()) {
        staged.mode(mode.get());
      }
      staged.commit();
    } finally {
      if (staged != null) {
        staged.close();
      }
    }
  }

  /**
   * {@code GET /api/file/download?path=}: the file's bytes as {@code application/octet-stream} with
   * its Content-Length as of opening. A file that shrinks while being sent ends the response early
   * (the client sees a short body) rather than sending bytes that were never there.
   */
  private void download(Call call) throws IOException {
    call.allowQuery(PATH_ONLY);
    String requested = call.requiredQuery("path");
    try (OpenFile file = fs.open(requested);
        InputStream in = Channels.newInputStream(file.channel())) {
      long size = file.channel().size();
      // The name asked for, not the name of a link's target.
      String name = DirHandle.fileName(ClientPath.parse(requested).path());
      call.setHeader("Content-Disposition", ContentDisposition.attachment(name));
      if (size == 0) {
        call.setHeader("Content-Type", "application/octet-stream");
        call.send(200, new byte[0]);
        return;
      }
      try (OutputStream out = call.stream(200, "application/octet-stream", size)) {
        long sent = copyUpTo(in, out, size);
        if (sent < size) {
          throw new IOException(requested + " shrank to " + sent + " bytes while being sent");
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

  /**
   * {@code POST /api/file/create_directory}: {@code path} from the query or a JSON body {@code
   * {"path": ..., "parents": true, "mode": "0755"}}; with {@code parents} (the default, as
   * OpenHands) {@code mkdir -p}, succeeding when the directory already exists. Answers whether it
   * created anything.
   */
  private void createDirectory(Call call) throws IOException {
    call.allowQuery(Set.of("path", "parents", "mode"));
    Optional<String> query = call.query("path");
    String path;
    boolean parents;
    int mode;
    if (query.isPresent()) {
      path = query.get();
      parents = call.queryBoolean("parents").orElse(true);
      mode = call.query("mode").map(m -> Modes.parse("mode", m)).orElse(0755);
    } else {
      byte[] body = call.smallBody();
      if (body.length == 0) {
        throw HttpError.unprocessable(
            "'path' is required, as a query parameter or a JSON body {\"path\": ...}");
      }
      JsonBody json = JsonBody.parse(body, Set.of("path", "parents", "mode"));
      path = json.requiredString("path");
      parents = json.optionalBoolean("parents").orElse(true);
      mode = json.optionalString("mode").map(m -> Modes.parse("mode", m)).orElse(0755);
    }
    boolean created = fs.createDirectory(path, parents, mode);
    call.sendJson(200, Map.of("success", true, "created", created));
  }

  /**
   * {@code GET /api/file/list?path=[&depth=1][&include_hidden=true][&gitignore=false]
   * [&limit=10000]}: {@code {"path", "entries": [...], "truncated"}}.
   */
  private void list(Call call) throws IOException {
    call.allowQuery(Set.of("path", "depth", "include_hidden", "gitignore", "limit"));
    String path = call.requiredQuery("path");
    Listing.Options options =
        new Listing.Options(
            call.queryInt("depth", 1, Listing.MAX_DEPTH).orElse(1),
            call.queryBoolean("include_hidden").orElse(true),
            call.queryBoolean("gitignore").orElse(false),
            call.queryInt("limit", 1, Listing.MAX_LIMIT).orElse(10_000));
    try (DirHandle dir = fs.directory(path)) {
      Listing.Result result = Listing.of(dir, options);
      List<Map<String, Object>> entries = new ArrayList<>(result.entries().size());
      for (Listing.Listed listed : result.entries()) {
        Map<String, Object> entry = json(listed.entry());
        entry.put("depth", listed.depth());
        entries.add(entry);
      }
      Map<String, Object> reply = new LinkedHashMap<>();
      reply.put("path", dir.path().toString());
      reply.put("entries", entries);
      reply.put("truncated", result.truncated());
      call.sendJson(200, reply);
    }
  }

  /** {@code GET /api/file/stat?path=[&follow_links=true]}: one entry. */
  private void stat(Call call) throws IOException {
    call.allowQuery(Set.of("path", "follow_links"));
    FileEntry entry =
        fs.stat(call.requiredQuery("path"), call.queryBoolean("follow_links").orElse(true));
    call.sendJson(200, json(entry));
  }

  static Map<String, Object> json(FileEntry entry) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("name", entry.name());
    json.put("path", entry.path().toString());
    json.put("type", entry.type().wireName());
    json.put("size", entry.size());
    json.put("mode", Modes.format(entry.mode()));
    json.put("mtime", entry.modified().toString());
    json.put("owner", entry.owner());
    json.put("group", entry.group());
    json.put("link_target", entry.linkTarget().orElse(null));
    return json;
  }

  /** {@code POST /api/file/move {"source", "destination", "overwrite": false}}. */
  private void move(Call call) throws IOException {
    JsonBody body = call.jsonBody(Set.of("source", "destination", "overwrite"));
    fs.move(
        body.requiredString("source"),
        body.requiredString("destination"),
        body.optionalBoolean("overwrite").orElse(false));
    call.sendJson(200, SUCCESS);
  }

  /** {@code POST /api/file/copy {"source", "destination", "overwrite": false}}. */
  private void copy(Call call) throws IOException {
    JsonBody body = call.jsonBody(Set.of("source", "destination", "overwrite"));
    long copied =
        fs.copy(
            body.requiredString("source"),
            body.requiredString("destination"),
            body.optionalBoolean("overwrite").orElse(false));
    call.sendJson(200, Map.of("success", true, "copied", copied));
  }

  /** {@code POST /api/file/delete {"path", "recursive": false}}. */
  private void delete(Call call) throws IOException {
    JsonBody body = call.jsonBody(Set.of("path", "recursive"));
    long deleted =
        fs.delete(body.requiredString("path"), body.optionalBoolean("recursive").orElse(false));
    call.sendJson(200, Map.of("success", true, "deleted", deleted));
  }

  /** {@code POST /api/file/chmod {"path", "mode": "0644", "recursive": false}}. */
  private void chmod(Call call) throws IOException {
    JsonBody body = call.jsonBody(Set.of("path", "mode", "recursive"));
    int mode = Modes.parse("mode", body.requiredString("mode"));
    long changed =
        fs.chmod(
            body.requiredString("path"), mode, body.optionalBoolean("recursive").orElse(false));
    call.sendJson(200, Map.of("success", true, "changed", changed));
  }

  /**
   * {@code POST /api/file/upload_tar?path=}: the body is a tar (or tar.gz) extracted under the
   * directory {@code path}, created if missing; see {@link TarExtractor}.
   */
  private void uploadTar(Call call) throws IOException {
    call.allowQuery(PATH_ONLY);
    String path = call.requiredQuery("path");
    fs.createDirectory(path, true, 0755);
    TarExtractor.Result result;
    try (DirHandle target = fs.directory(path)) {
      result = new TarExtractor(fs, user, target).extract(call.body());
    }
    Map<String, Object> reply = new LinkedHashMap<>();
    reply.put("success", true);
    reply.put("entries", result.entries());
    reply.put("bytes", result.bytes());
    reply.put("skipped", result.skipped());
    call.sendJson(200, reply);
  }

  /**
   * {@code GET /api/file/download_tar?path=[&gzip=false]}: the directory as a tar stream under
   * {@code <name>/}, links stored as links, every entry included.
   */
  private void downloadTar(Call call) throws IOException {
    call.allowQuery(Set.of("path", "gzip"));
    boolean gzip = call.queryBoolean("gzip").orElse(false);
    try (DirHandle dir = fs.directory(call.requiredQuery("path"))) {
      String name = TreeArchiver.rootName(dir.path()) + (gzip ? ".tar.gz" : ".tar");
      call.setHeader("Content-Disposition", ContentDisposition.attachment(name));
      try (OutputStream body =
              call.stream(200, gzip ? "application/gzip" : "application/x-tar", 0);
          TarEntryWriter tar =
              new TarEntryWriter(
                  gzip
                      ? ArchiveRoute.gzipped(body)
                      : new java.io.BufferedOutputStream(body, COPY_BUFFER_BYTES))) {
        TreeArchiver.plain(dir, tar).write();
        tar.finish();
      }
    }
  }
}
