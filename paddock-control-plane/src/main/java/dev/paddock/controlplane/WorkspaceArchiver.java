package dev.paddock.controlplane;

import com.fasterxml.jackson.jr.ob.JSON;
import dev.paddock.api.ArchiveStore;
import dev.paddock.api.InvalidRequestException;
import dev.paddock.api.spi.AgentCallException;
import dev.paddock.api.spi.SandboxAgent;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
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
 * Captures a sandbox's workspace from its agent (through {@link SandboxAgent#openArchive}, which
 * the backend routes) into the archive store: each format is streamed to a temporary file while its
 * SHA-256 and size are computed, then uploaded with a {@code .manifest.json} beside it. Memory
 * stays flat whatever the workspace's size. Thread-safe.
 */
final class WorkspaceArchiver implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(WorkspaceArchiver.class);
  static final String MANIFEST_SUFFIX = ".manifest.json";

  /**
   * One segment of an archive name, as written and as read back: bounded so that no name reaches
   * the file system's limits (a longer one would fail there and look like a store outage).
   */
  static final Pattern SEGMENT = Pattern.compile("[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}");

  private static final DateTimeFormatter STAMP =
      DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmssSSS'Z'").withZone(ZoneOffset.UTC);
  private static final int BUFFER_BYTES = 64 * 1024;
  static final Duration ENVIRONMENT_TIMEOUT = Duration.ofSeconds(8);

  private final ArchiveSettings settings;
  private final ArchiveStore store;
  private final Clock clock;

  /** Base keys being written by captures in this JVM, so two at once never pick the same one. */
  private final java.util.Set<String> reserved = java.util.concurrent.ConcurrentHashMap.newKeySet();

  WorkspaceArchiver(ArchiveSettings settings, ArchiveStore store, Clock clock) {
    this.settings = settings;
    this.store = store;
    this.clock = clock;
  }

  /** What is captured from: the sandbox, its owner, its conversation and its agent. */
  record Source(
      String sandboxId,
      Optional<String> owner,
      Optional<String> conversationId,
      SandboxAgent agent) {}

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
    Optional<SandboxAgent.Archive> archive = open(source, format, timeout);
    if (archive.isEmpty()) {
      LOG.info("sandbox {}: nothing to archive as {}", source.sandboxId(), format);
      return Optional.empty();
    }
    try (InputStream body = archive.get().body()) {
      return Optional.of(copy(body, temp, format, archive.get().repository(), timeout));
    } catch (IOException e) {
      throw new ArchiveFailure("the " + format + " archive download failed: " + describe(e), e);
    }
  }

  private static Duration min(Duration a, Duration b) {
    return a.compareTo(b) <= 0 ? a : b;
  }

  // The full tar.gz capture keeps what the agent excludes by default; credentials are still
  // dropped.
  private static Optional<SandboxAgent.Archive> open(
      Source source, String format, Duration timeout) {
    try {
      return source.agent().openArchive(format, !format.equals(ArchiveSettings.TAR_GZ), timeout);
    } catch (AgentCallException e) {
      if (Thread.currentThread().isInterrupted()) {
        throw new ArchiveFailure("interrupted while archiving", e);
      }
      // The call's message names the agent's address: it goes to the log with the exception.
      throw new ArchiveFailure(
          "the agent could not send the " + format + " archive (its call failed; see the log)", e);
    }
  }

  // The request timeout ends at the headers; a watchdog closes a body that outlives it.
  private Download copy(
      InputStream body, Path temp, String format, Map<String, String> repository, Duration timeout)
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
    return new Download(bytes, HexFormat.of().formatHex(sha.digest()), repository);
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
      throw new ArchiveFailure("uploading " + key + " failed: " + describe(e), e);
    }
  }

  private void upload(String key, String json) {
    Path temp = tempFile("manifest");
    try {
      Files.writeString(temp, json);
      store.put(key, temp);
    } catch (IOException e) {
      throw new ArchiveFailure("uploading " + key + " failed: " + describe(e), e);
    } finally {
      deleteQuietly(temp);
    }
  }

  /**
   * Asks the agent for its environment (OS and runtime versions) within {@link
   * #ENVIRONMENT_TIMEOUT}; any failure only means the manifest has no environment.
   */
  private static Optional<Map<String, Object>> environment(Source source, Duration timeout) {
    Optional<Map<String, Object>> environment = source.agent().environment(timeout);
    if (Thread.currentThread().isInterrupted()) {
      throw new ArchiveFailure("interrupted while archiving", null);
    }
    if (environment.isEmpty()) {
      LOG.info("sandbox {}: no environment for the manifest", source.sandboxId());
    }
    return environment;
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
      throw new ArchiveFailure("the archive store cannot be listed: " + describe(e), e);
    }
    held.remove(base);
    return true;
  }

  private static Path tempFile(String what) {
    try {
      return Files.createTempFile("paddock-archive-" + what + "-", ".part");
    } catch (IOException e) {
      throw new ArchiveFailure("no temporary file for the archive: " + describe(e), e);
    }
  }

  /**
   * What a failure's message says of an I/O error: its cause ("No space left on device", "Read-only
   * file system"), not the exception's class nor the paths on the control plane's host that a
   * {@link FileSystemException}'s message names. The whole exception is logged.
   */
  static String describe(IOException e) {
    if (e instanceof FileSystemException fs) {
      if (fs.getReason() != null) {
        return fs.getReason();
      }
      if (fs instanceof NoSuchFileException) {
        return "a file or directory is missing";
      }
      return fs instanceof AccessDeniedException ? "permission denied" : "file system error";
    }
    // An IOException made from its cause (new IOException(cause), as the JDK's HTTP body streams
    // do) has the cause's toString as its message: a class name, so the cause is told instead.
    if (e.getCause() != null && String.valueOf(e.getCause()).equals(e.getMessage())) {
      return e.getCause() instanceof IOException cause ? describe(cause) : "I/O error";
    }
    return e.getMessage() == null ? "I/O error" : e.getMessage();
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

  @Override
  public void close() {
    // Nothing of its own: the agents' HTTP client belongs to the service.
  }

  /** An archive could not be captured or stored; the message is safe to show and log. */
  static final class ArchiveFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    ArchiveFailure(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
