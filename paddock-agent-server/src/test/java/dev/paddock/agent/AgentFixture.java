package dev.paddock.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.agent.core.AgentConfig;
import dev.paddock.agent.core.KeyRing;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A real agent-server on a loopback port 0, with its own temporary workspace and spool directory,
 * and a small HTTP client for it. Register with {@code @RegisterExtension}. After each test it
 * stops the server and fails the test if any child process of this JVM is still alive or the
 * temporary directories could not be removed: a test must not leak processes or files.
 */
public final class AgentFixture implements BeforeEachCallback, AfterEachCallback {
  public static final String KEY = "test-session-key-0123456789abcdef";
  public static final String ADMIN_KEY = "test-admin-key-fedcba9876543210";

  /** Agents of all fixtures still running: the leak check runs when the last one stops. */
  private static final java.util.concurrent.atomic.AtomicInteger LIVE =
      new java.util.concurrent.atomic.AtomicInteger();

  private final Consumer<AgentConfig.Builder> customizer;
  private Path root;
  private AgentServer server;
  private final HttpClient client =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  public AgentFixture() {
    this(b -> {});
  }

  /**
   * The race tests' set-up: the workspace is the only file root, and as root the agent runs
   * commands as nobody (the Docker backend's production set-up), so only confinement keeps a
   * request out of what lies beside the workspace.
   */
  public static AgentFixture confinedToWorkspace() {
    boolean root = "root".equals(System.getProperty("user.name"));
    return new AgentFixture(
        b -> {
          b.fileRoots(List.of(b.build().workspace()));
          if (root) {
            b.runAs(new dev.paddock.agent.user.RunAs(65534, 65534));
          }
        });
  }

  /** A fixture whose configuration {@code customizer} adjusts (timeouts, caps, retention...). */
  public AgentFixture(Consumer<AgentConfig.Builder> customizer) {
    this.customizer = customizer;
  }

  @Override
  public void beforeEach(ExtensionContext context) throws IOException {
    root = Files.createTempDirectory("paddock-agent-test-");
    Files.createDirectories(root.resolve("workspace"));
    AgentConfig.Builder builder =
        AgentConfig.builder()
            .host("127.0.0.1")
            .port(0)
            .workspace(root.resolve("workspace"))
            .eventsDir(root.resolve("events"))
            .killGrace(Duration.ofMillis(500))
            .sessionKeys(KeyRing.ofKeys(List.of(KEY)))
            .adminKeys(KeyRing.ofKeys(List.of(ADMIN_KEY)));
    customizer.accept(builder);
    AgentConfig config = builder.build();
    if (config.runAs().isPresent()) {
      // A temporary directory is 0700: commands running as another user must pass through it.
      Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwx--x--x"));
    }
    server = AgentServer.start(config);
    LIVE.incrementAndGet();
  }

  @Override
  public void afterEach(ExtensionContext context) throws IOException {
    if (server != null) {
      server.close();
      server = null;
      if (LIVE.decrementAndGet() > 0) {
        // Another fixture of this test is still running its agent (and its processes); the last
        // one to stop checks for leaks of both.
        deleteTree(root);
        return;
      }
    }
    // Child processes (commands, sessions, their descendants) must all be gone.
    ChildProcesses.awaitNoneLeft();
    deleteTree(root);
    assertThat(root).as("temporary directory removed").doesNotExist();
  }

  private static void deleteTree(Path dir) throws IOException {
    if (dir == null || !Files.exists(dir)) {
      return;
    }
    try (var paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        p.toFile().setWritable(true);
        Files.deleteIfExists(p);
      }
    }
  }

  public AgentServer server() {
    return server;
  }

  public Path workspace() {
    return root.resolve("workspace");
  }

  /** A scratch directory outside the workspace, removed after the test. */
  public Path scratch() throws IOException {
    return Files.createDirectories(root.resolve("scratch"));
  }

  public URI uri(String pathAndQuery) {
    return URI.create("http://127.0.0.1:" + server.port() + pathAndQuery);
  }

  public HttpClient client() {
    return client;
  }

  /** A request builder with the session key already set. */
  public HttpRequest.Builder request(String pathAndQuery) {
    return HttpRequest.newBuilder(uri(pathAndQuery))
        .timeout(Duration.ofSeconds(60))
        .header(AgentServer.SESSION_KEY_HEADER, KEY);
  }

  public HttpResponse<String> send(HttpRequest request) throws IOException, InterruptedException {
    return client.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
  }

  public HttpResponse<String> get(String pathAndQuery) throws IOException, InterruptedException {
    return send(request(pathAndQuery).GET().build());
  }

  public HttpResponse<String> delete(String pathAndQuery) throws IOException, InterruptedException {
    return send(request(pathAndQuery).DELETE().build());
  }

  public HttpResponse<String> postJson(String path, String json)
      throws IOException, InterruptedException {
    return send(
        request(path)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json))
            .build());
  }

  /** Parses a JSON object response body. */
  @SuppressWarnings("unchecked")
  public static Map<String, Object> json(HttpResponse<String> response) {
    return (Map<String, Object>)
        dev.paddock.http.Json.parseAny(response.body().getBytes(StandardCharsets.UTF_8));
  }

  /** Parses a JSON object. */
  @SuppressWarnings("unchecked")
  public static Map<String, Object> json(String body) {
    return (Map<String, Object>)
        dev.paddock.http.Json.parseAny(body.getBytes(StandardCharsets.UTF_8));
  }

  /** Parses any JSON response body. */
  public static Object jsonAny(HttpResponse<String> response) {
    return dev.paddock.http.Json.parseAny(response.body().getBytes(StandardCharsets.UTF_8));
  }

  /** JSON-quotes a string for building request bodies. */
  public static String quote(String s) {
    return dev.paddock.http.Json.string(s);
  }
}
