package dev.paddock.agent.git;

import com.fasterxml.jackson.core.JsonGenerator;
import dev.paddock.agent.core.AgentConfig;
import dev.paddock.agent.user.CommandUser;
import dev.paddock.http.Call;
import dev.paddock.http.HttpError;
import dev.paddock.http.Json;
import dev.paddock.http.Router;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The {@code /api/git} routes:
 *
 * <ul>
 *   <li>{@code GET /api/git/changes?path=<dir>&ref=<rev>} lists {@code [{"status", "path"}]} of
 *       work-tree changes against {@code ref} (default HEAD; the empty tree on a branch without
 *       commits); {@code []} outside a repository;
 *   <li>{@code GET /api/git/diff?path=<file>&ref=<rev>|commit=<hex>} returns {@code {"modified",
 *       "original"}} texts, {@code null} where the file is absent; both {@code null} outside a
 *       repository.
 * </ul>
 *
 * A missing {@code path} or an unknown parameter is 422; a relative path, a bad revision or a git
 * error is 400; a path outside the configured file roots is 403; git missing or timing out is 500.
 */
public final class GitRoutes {
  /** Linux's PATH_MAX: no longer path can name a file. */
  private static final int MAX_PATH_BYTES = 4096;

  /** How much of a client's path an error message repeats. */
  private static final int SHOWN_CHARS = 200;

  private final AgentConfig config;
  private final WorkingTreeChanges changes;
  private final FileVersions versions;

  private GitRoutes(AgentConfig config, GitCli git) {
    this.config = config;
    this.changes = new WorkingTreeChanges(git);
    this.versions = new FileVersions(git);
  }

  /** Registers the routes; their git processes run as {@code user}. */
  public static void register(Router router, AgentConfig config, CommandUser user) {
    register(router, config, GitCli.system(user));
  }

  static void register(Router router, AgentConfig config, GitCli git) {
    GitRoutes routes = new GitRoutes(config, git);
    router
        .add("GET", "/api/git/changes", call -> routes.guard(() -> routes.changes(call)))
        .add("GET", "/api/git/diff", call -> routes.guard(() -> routes.diff(call)));
  }

  private void changes(Call call) throws IOException {
    call.allowQuery(Set.of("path", "ref"));
    Path dir = allowedPath(call.requiredQuery("path"));
    Optional<String> ref = call.query("ref").map(r -> Revisions.checkRef("ref", r));
    if (!Files.exists(dir)) {
      // OpenHands' clients ask for the changes of a workspace before anything is cloned into it.
      call.sendJson(200, List.of());
      return;
    }
    if (!Files.isDirectory(dir)) {
      throw HttpError.badRequest("'path' must be a directory: " + shown(dir.toString()));
    }
    List<Map<String, String>> body =
        changes.against(dir, ref).stream()
            .map(c -> Map.of("status", c.status().name(), "path", c.path()))
            .toList();
    call.sendJson(200, body);
  }

  private void diff(Call call) throws IOException {
    call.allowQuery(Set.of("path", "ref", "commit"));
    Path file = allowedPath(call.requiredQuery("path"));
    Optional<String> ref = call.query("ref");
    Optional<String> commit = call.query("commit");
    if (ref.isPresent() && commit.isPresent()) {
      throw HttpError.badRequest("give either 'ref' or 'commit', not both");
    }
    String param = commit.isPresent() ? "commit" : "ref";
    Optional<String> rev =
        commit.isPresent()
            ? Optional.of(Revisions.checkCommitId(commit.get()))
            : ref.map(r -> Revisions.checkRef("ref", r));
    if (Files.isDirectory(file)) {
      throw HttpError.badRequest(
          "'path' must be a file, got a directory: " + shown(file.toString()));
    }
    FileVersions.Versions result = versions.of(file, param, rev);
    Map<String, Optional<String>> body = new LinkedHashMap<>();
    body.put("modified", result.modified());
    body.put("original", result.original());
    call.setHeader("Content-Type", "application/json");
    call.send(200, objectWithNulls(body));
  }

  /**
   * A flat JSON object whose absent values are written as {@code null}: the shared binder leaves
   * null map entries out, but clients of this route expect both keys.
   */
  private static byte[] objectWithNulls(Map<String, Optional<String>> fields) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (JsonGenerator json = Json.generator(out)) {
      json.writeStartObject();
      for (Map.Entry<String, Optional<String>> field : fields.entrySet()) {
        json.writeFieldName(field.getKey());
        if (field.getValue().isPresent()) {
          json.writeString(field.getValue().get());
        } else {
          json.writeNull();
        }
      }
      json.writeEndObject();
    }
    return out.toByteArray();
  }

  /** {@code raw} as a normalised absolute path inside the file roots; 400 or 403 otherwise. */
  private Path allowedPath(String raw) throws IOException {
    if (raw.indexOf('\0') >= 0) {
      throw HttpError.badRequest("'path' must not contain a NUL character");
    }
    if (raw.getBytes(java.nio.charset.StandardCharsets.UTF_8).length > MAX_PATH_BYTES) {
      throw HttpError.badRequest(
          "'path' is "
              + raw.length()
              + " characters long; a path has at most "
              + MAX_PATH_BYTES
              + " bytes (starts '"
              + shown(raw)
              + "')");
    }
    Path path;
    try {
      path = Path.of(raw);
    } catch (java.nio.file.InvalidPathException e) {
      throw HttpError.badRequest("'path' is not a valid path: " + e.getReason());
    }
    if (!path.isAbsolute()) {
      throw HttpError.badRequest("'path' must be absolute, got '" + shown(raw) + "'");
    }
    Path normal = path.normalize();
    // Judge by where links lead: a link inside a root may point anywhere.
    Path real = Files.exists(normal) ? normal.toRealPath() : normal;
    if (config.fileRoots().stream().noneMatch(real::startsWith)) {
      throw new HttpError(403, "'path' is outside the allowed file roots: " + shown(raw));
    }
    return normal;
  }

  /** At most the first {@link #SHOWN_CHARS} characters of {@code text}, for error messages. */
  private static String shown(String text) {
    return text.length() <= SHOWN_CHARS ? text : text.substring(0, SHOWN_CHARS) + "...";
  }

  /** A route body whose git failures become 500 replies that keep git's message. */
  @FunctionalInterface
  private interface Body {
    void run() throws IOException;
  }

  private void guard(Body body) throws IOException {
    try {
      body.run();
    } catch (GitFailure e) {
      throw e.asHttpError();
    }
  }
}
