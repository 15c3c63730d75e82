package dev.paddock.controlplane;

import com.fasterxml.jackson.jr.ob.JSON;
import dev.paddock.api.ArchiveStore;
import dev.paddock.api.InvalidRequestException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.URLDecoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Captures a sandbox's workspace from its agent ({@code GET /api/file/archive}, authenticated with
 * the sandbox's admin key) into the archive store: each format is streamed to a temporary file
 * while its SHA-256 and size are computed, then uploaded with a {@code .manifest.json} beside it.
 * Memory stays flat whatever the workspace's size. Thread-safe.
 */
final class WorkspaceArchiver implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(WorkspaceArchiver.class);
  static final String MANIFEST_SUFFIX = ".manifest.json";
  private static final Pattern SEGMENT = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}");
  private static final DateTimeFormatter STAMP =
      DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmssSSS'Z'").withZone(ZoneOffset.UTC);
  private static final int BUFFER_BYTES = 64 * 1024;
  static final Duration ENVIRONMENT_TIMEOUT = Duration.ofSeconds(8);

  private final ArchiveSettings settings;
  private final ArchiveStore store;
  private final Clock clock;
  private final HttpClient http;

  /** Base keys being written by captures in this JVM, so two at once never pick the same one. */
  private final java.util.Set<String> reserved = java.util.concurrent.ConcurrentHashMap.newKeySet();

  WorkspaceArchiver(
      ArchiveSettings settings, ArchiveStore store, Clock clock, Duration connectTimeout) {
    this.settings = settings;
    this.store = store;
    this.clock = clock;
    this.http = HttpClient.newBuilder().connectTimeout(connectTimeout).build();
  }

  /** What is captured from: the sandbox, its owner, its agent and the agent's admin key. */
  record Source(
      String sandboxId,
      Optional<String> owner,
      Optional<String> conversationId,
      String agentUrl,
      String adminKey) {}

  /** When a capture is taken: {@code final} before delete, {@code initial} right after start. */
  enum Phase {
    INITIAL,
    FINAL;

    String label() {
      return name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /** A final capture, each download bounded by the settings' timeout. */
  List<String> capture(Source source) {
    return capture(source, Phase.FINAL, settings.timeout());
  }

  /**
   * Captures every configured format; a format the agent has nothing for (400) is skipped. The
   * environment (OS, runtimes) is asked once, best effort, and goes into every manifest.
   *
   * @param deadline how long the whole capture may take (downloads are cut when it passes)
   * @return the keys of the archives stored
   * @throws ArchiveFailure when a capture or upload failed; its message is safe to show
   */
  List<String> capture(Source source, Phase phase, Duration deadline) {
    long end = System.nanoTime() + deadline.toNanos();
    Optional<Map<String, Object>> environment =
        environment(source, min(ENVIRONMENT_TIMEOUT, deadline));
    String base = reserveBaseKey(source);
    try {
      List<String> stored = new ArrayList<>();
      Map<String, String> repository = Map.of();
      for (String format : settings.formats()) {
        Capture capture = new Capture(source, phase, format, base, environment, end);
        Optional<Captured> captured = captureOne(capture, repository);
        captured.ifPresent(c -> stored.add(c.key()));
        if (captured.isPresent() && repository.isEmpty()) {
          repository = captured.get().repository(); // git-delta's base commit describes the tar
        }
      }
      return stored;
    } finally {
      reserved.remove(base);
    }
  }

  /** One format of one capture. */
  private record Capture(
      Source source,
      Phase phase,
      String format,
      String base,
      Optional<Map<String, Object>> environment,
      long endNanos) {
    Duration remaining() {
      long left = endNanos - System.nanoTime();
      if (left <= 0) {
        throw new ArchiveFailure("the " + phase.label() + " archive ran out of time", null);
      }
      return Duration.ofNanos(left);
    }
  }

  private record Captured(String key, Map<String, String> repository) {}

  private Optional<Captured> captureOne(Capture capture, Map<String, String> known) {
    Source source = capture.source();
    String format = capture.format();
    String key = capture.base() + (format.equals(ArchiveSettings.TAR_GZ) ? ".tar.gz" : ".patch");
    Path temp = tempFile(source.sandboxId());
    try {
      Optional<Download> download = download(capture, temp);
      if (download.isEmpty()) {
        return Optional.empty();
      }
      Map<String, String> repository = new TreeMap<>(known);
      repository.putAll(download.get().repository());
      upload(key, temp, download.get());
      upload(key + MANIFEST_SUFFIX, manifest(capture, download.get(), repository));
      LOG.info(
          "sandbox {}: archived {} ({} bytes) to {}",
          source.sandboxId(),
          format,
          download.get().bytes(),
          key);
      return Optional.of(new Captured(key, repository));
    } finally {
      deleteQuietly(temp);
    }
  }

  /** A finished download: size, SHA-256 and the repository headers. */
  private record Download(long bytes, String sha256, Map<String, String> repository) {}

  private Optional<Download> download(Capture capture, Path temp) {
    Source source = capture.source();
    String format = capture.format();
    Duration timeout = min(settings.timeout(), capture.remaining());
    HttpResponse<InputStream> response = send(source, format, timeout);
    try (InputStream body = response.body()) {
      int status = response.statusCode();
      if (status == 400) {
        LOG.info("sandbox {}: nothing to archive as {}", source.sandboxId(), format);
        return Optional.empty();
      }
      if (status != 200) {
        throw new ArchiveFailure(
            "the agent answered " + status + " to the " + format + " archive request", null);
      }
      return Optional.of(copy(body, temp, format, response, timeout));
    } catch (IOException e) {
      throw new ArchiveFailure("the " + format + " archive download failed: " + e, e);
    }
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }

  private HttpResponse<InputStream> send(Source source, String format, Duration timeout) {
    String query = "?format=" + format;
    if (format.equals(ArchiveSettings.TAR_GZ)) {
      query += "&use_default_excludes=false"; // the full capture; credentials are still dropped
    }
    HttpRequest request =
        HttpRequest.newBuilder(
                URI.create(stripSlash(source.agentUrl()) + "/api/file/archive" + query))
            .timeout(timeout)
            .header(AgentAdminClient.ADMIN_KEY_HEADER, source.adminKey())
            .GET()
            .build();
    try {
      return http.send(request, HttpResponse.BodyHandlers.ofInputStream());
    } catch (IOException e) {
      throw new ArchiveFailure("the agent could not be reached for the archive: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ArchiveFailure("interrupted while archiving", e);
    }
  }

  // The request timeout ends at the headers; a watchdog closes a body that outlives it.
  private Download copy(
      InputStream body, Path temp, String format, HttpResponse<?> response, Duration timeout)
      throws IOException {
    CompletableFuture<Void> done = new CompletableFuture<>();
    CompletableFuture.runAsync(
        () -> closeIfRunning(body, done),
        CompletableFuture.delayedExecutor(timeout.toMillis(), TimeUnit.MILLISECONDS));
    MessageDigest sha = sha256();
    long bytes = 0;
    try (OutputStream out = new DigestOutputStream(Files.newOutputStream(temp), sha)) {
      byte[] buffer = new byte[BUFFER_BYTES];
      for (int n; (n = body.read(buffer)) >= 0; ) {
        out.write(buffer, 0, n);
        bytes += n;
      }
    } catch (IOException e) {
      if (done.isCompletedExceptionally()) {
        throw new ArchiveFailure("the " + format + " archive took longer than " + timeout, e);
      }
      throw e;
    } finally {
      done.complete(null);
    }
    return new Download(bytes, HexFormat.of().formatHex(sha.digest()), repository(response));
  }

  private static void closeIfRunning(InputStream body, CompletableFuture<Void> done) {
    if (done.completeExceptionally(new IllegalStateException("timed out"))) {
      try {
        body.close();
      } catch (IOException e) {
        LOG.debug("closing a timed-out archive body", e);
      }
    }
  }

  private static Map<String, String> repository(HttpResponse<?> response) {
    Map<String, String> fields = new TreeMap<>();
    header(response, "X-Archive-Base-Commit").ifPresent(v -> fields.put("base_commit", v));
    header(response, "X-Archive-Repo-Remote").ifPresent(v -> fields.put("repo_remote", v));
    header(response, "X-Archive-Branch").ifPresent(v -> fields.put("branch", v));
    header(response, "X-Archive-Head-Commit").ifPresent(v -> fields.put("head_commit", v));
    return fields;
  }

  // The agent percent-encodes every X-Archive-* value; '+' is a plus, not a space.
  private static Optional<String> header(HttpResponse<?> response, String name) {
    return response
        .headers()
        .firstValue(name)
        .filter(v -> !v.isEmpty())
        .map(v -> URLDecoder.decode(v.replace("+", "%2B"), StandardCharsets.UTF_8));
  }

  private String manifest(Capture capture, Download download, Map<String, String> repository) {
    Source source = capture.source();
    Map<String, Object> manifest = new TreeMap<>();
    manifest.put("sandbox_id", source.sandboxId());
    manifest.put("owner_user_id", source.owner().orElse(null));
    manifest.put("conversation_id", source.conversationId().orElse(null));
    manifest.put("phase", capture.phase().label());
    manifest.put("format", capture.format());
    manifest.put("environment", capture.environment().orElse(null));
    manifest.put("byte_count", download.bytes());
    manifest.put("sha256", download.sha256());
    for (String field : List.of("base_commit", "repo_remote", "branch", "head_commit")) {
      manifest.put(field, repository.get(field));
    }
    manifest.put("created_at", clock.instant().toString());
    try {
      return JSON.std.asString(manifest);
    } catch (IOException e) {
      throw new IllegalStateException("a map of strings and numbers always serialises", e);
    }
  }

  private void upload(String key, Path file, Download download) {
    try {
      store.put(key, file);
      long stored = store.size(key).orElse(-1L);
      if (stored != download.bytes()) {
        throw new ArchiveFailure(
            "the archive store holds " + stored + " bytes of " + key + ", not " + download.bytes(),
            null);
      }
    } catch (IOException e) {
      throw new ArchiveFailure("uploading " + key + " failed: " + e, e);
    }
  }

  private void upload(String key, String json) {
    Path temp = tempFile("manifest");
    try {
      Files.writeString(temp, json);
      store.put(key, temp);
    } catch (IOException e) {
      throw new ArchiveFailure("uploading " + key + " failed: " + e, e);
    } finally {
      deleteQuietly(temp);
    }
  }

  /**
   * Asks the agent's {@code GET /api/environment} (OS and runtime versions) within {@link
   * #ENVIRONMENT_TIMEOUT}; any failure only means the manifest has no environment.
   */
  private Optional<Map<String, Object>> environment(Source source, Duration timeout) {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(stripSlash(source.agentUrl()) + "/api/environment"))
            .timeout(timeout)
            .header(AgentAdminClient.ADMIN_KEY_HEADER, source.adminKey())
            .GET()
            .build();
    try {
      HttpResponse<byte[]> response = http.send(request, HttpResponse.BodyHandlers.ofByteArray());
      if (response.statusCode() != 200) {
        LOG.info(
            "sandbox {}: no environment for the manifest (agent answered {})",
            source.sandboxId(),
            response.statusCode());
        return Optional.empty();
      }
      Map<String, Object> body = JSON.std.mapFrom(response.body());
      Map<String, Object> environment = new TreeMap<>();
      environment.put("os", body.get("os") instanceof String os ? os : null);
      environment.put(
          "runtimes", body.get("runtimes") instanceof Map<?, ?> m ? new TreeMap<>(m) : Map.of());
      return Optional.of(environment);
    } catch (IOException | RuntimeException e) {
      LOG.info("sandbox {}: no environment for the manifest: {}", source.sandboxId(), e.toString());
      return Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new ArchiveFailure("interrupted while archiving", e);
    }
  }

  /**
   * {@code prefix/sandbox/conversation-or-sandbox/stamp}, unused by any earlier capture in the
   * store and by any capture under way in this JVM; release it with {@code reserved.remove}.
   */
  private String reserveBaseKey(Source source) {
    String conversation = source.conversationId().orElse(source.sandboxId());
    if (!SEGMENT.matcher(conversation).matches()) {
      throw InvalidRequestException.badRequest("malformed conversation id '" + conversation + "'");
    }
    String dir = settings.prefix() + "/" + source.sandboxId() + "/" + conversation + "/";
    String stamp = STAMP.format(now());
    String base = dir + stamp;
    for (int n = 2; !reserved.add(base) || taken(base, reserved); n++) {
      base = dir + stamp + "-" + n;
    }
    return base;
  }

  private Instant now() {
    return clock.instant();
  }

  // Releases the reservation it holds when the key is already in the store.
  private boolean taken(String base, java.util.Set<String> held) {
    try {
      if (store.list(base + ".").isEmpty()) {
        return false;
      }
    } catch (IOException e) {
      held.remove(base);
      throw new ArchiveFailure("the archive store cannot be listed: " + e, e);
    }
    held.remove(base);
    return true;
  }

  private static Path tempFile(String what) {
    try {
      return Files.createTempFile("paddock-archive-" + what + "-", ".part");
    } catch (IOException e) {
      throw new ArchiveFailure("no temporary file for the archive: " + e, e);
    }
  }

  private static void deleteQuietly(Path file) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      LOG.warn("cannot delete the temporary archive file {}", file, e);
    }
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-256", e);
    }
  }

  private static String stripSlash(String url) {
    return url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
  }

  @Override
  public void close() {
    http.close();
  }

  /** An archive could not be captured or stored; the message is safe to show and log. */
  static final class ArchiveFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ArchiveFailure(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
