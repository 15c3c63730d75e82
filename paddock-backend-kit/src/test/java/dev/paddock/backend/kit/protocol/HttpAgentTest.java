package dev.paddock.backend.kit.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.paddock.api.KeyDigest;
import dev.paddock.api.spi.AgentCallException;
import dev.paddock.api.spi.SandboxAgent;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The standard HTTP route to an agent, against an HTTP server that answers as the agent does. */
class HttpAgentTest {
  private static final String ADMIN = "admin-key";

  private final Map<String, String> seen = new ConcurrentHashMap<>();
  private HttpServer server;
  private HttpAgents agents;
  private SandboxAgent agent;

  @BeforeEach
  void start() throws IOException {
    server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
    server.createContext(AgentProtocol.SESSION_KEYS, this::sessionKeys);
    server.createContext(AgentProtocol.ARCHIVE, this::archive);
    server.createContext(AgentProtocol.ENVIRONMENT, this::environment);
    server.createContext(
        AgentProtocol.SERVER_INFO, e -> reply(e, 200, "{\"idle_time\": 2.5, \"uptime\": 9}"));
    server.start();
    agents = HttpAgents.create(Duration.ofSeconds(5));
    agent = agents.at(url() + "/", ADMIN);
  }

  @AfterEach
  void stop() {
    agents.close();
    server.stop(0);
  }

  @Test
  void replacingKeysSendsOnlyDigestsWithTheAdminKey() {
    String digest = KeyDigest.sha256Hex("k");

    agent.replaceSessionKeys(List.of(digest));

    assertThat(seen)
        .containsEntry("keys.method", "PUT")
        .containsEntry("keys.admin", ADMIN)
        .containsEntry("keys.body", "{\"session_api_key_sha256\":[\"" + digest + "\"]}");
  }

  @Test
  void anImageAgentIsAskedWithItsSessionKeyAndTheWorkspacePath() throws IOException {
    SandboxAgent image = agents.launchKeyed(url(), "session-key", "/workspace/project");

    try (SandboxAgent.Archive a =
        image.openArchive(AgentProtocol.TAR_GZ, true, Duration.ofSeconds(5)).orElseThrow()) {
      assertThat(a.body().readAllBytes()).isNotEmpty();
    }

    assertThat(seen)
        .containsEntry("archive.session", "session-key")
        .containsEntry("archive.query", "format=tar.gz&path=%2Fworkspace%2Fproject");
  }

  @Test
  void anImageAgentRefusesKeyRotationAndOneWithoutTheArchiveRouteFailsClearly() {
    server.removeContext(AgentProtocol.ARCHIVE);
    SandboxAgent image = agents.launchKeyed(url(), "session-key", "/workspace/project");

    assertThatThrownBy(() -> image.replaceSessionKeys(List.of()))
        .isInstanceOf(AgentCallException.class)
        .hasMessageContaining("at launch only");
    assertThat(seen).doesNotContainKey("keys.method");
    assertThatThrownBy(() -> image.openArchive(AgentProtocol.TAR_GZ, true, Duration.ofSeconds(5)))
        .isInstanceOf(AgentCallException.class)
        .hasMessageContaining("has no /api/file/archive route (404)");
  }

  @Test
  void aRefusedRotationFails() {
    assertThatThrownBy(() -> agents.at(url(), "wrong").replaceSessionKeys(List.of()))
        .isInstanceOf(AgentCallException.class)
        .hasMessageContaining("403");
  }

  @Test
  void anArchiveStreamsWithItsDecodedRepositoryFacts() throws IOException {
    Optional<SandboxAgent.Archive> archive =
        agent.openArchive(AgentProtocol.TAR_GZ, false, Duration.ofSeconds(5));

    assertThat(archive).isPresent();
    try (SandboxAgent.Archive a = archive.get()) {
      assertThat(new String(a.body().readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("bytes");
      assertThat(a.repository()).containsEntry("branch", "feature/a+b");
    }
    assertThat(seen.get("archive.query")).isEqualTo("format=tar.gz&use_default_excludes=false");
  }

  @Test
  void nothingToArchiveIsEmptyAndAnErrorFails() {
    assertThat(agent.openArchive(AgentProtocol.GIT_DELTA, true, Duration.ofSeconds(5))).isEmpty();
    assertThatThrownBy(() -> agent.openArchive("zip", true, Duration.ofSeconds(5)))
        .isInstanceOf(AgentCallException.class)
        .hasMessageContaining("500");
  }

  @Test
  void environmentAndIdleTimeAreRead() {
    assertThat(agent.environment(Duration.ofSeconds(5)))
        .contains(Map.of("os", "Debian", "runtimes", Map.of("java", "25")));
    assertThat(agent.idleTime()).contains(Duration.ofMillis(2500));
  }

  @Test
  void anUnreachableAgentFailsOrAnswersEmpty() throws IOException {
    int port;
    try (var socket = new java.net.ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = socket.getLocalPort();
    }
    SandboxAgent gone = agents.at("http://127.0.0.1:" + port, ADMIN);

    assertThatThrownBy(() -> gone.replaceSessionKeys(List.of()))
        .isInstanceOf(AgentCallException.class)
        .hasMessageContaining("unreachable");
    assertThat(gone.idleTime()).isEmpty();
    assertThat(gone.environment(Duration.ofSeconds(1))).isEmpty();
  }

  @Test
  void aRefusingAgentRefusesEveryCall() {
    SandboxAgent refusing = SandboxAgent.refusing("no agent route on this backend");

    assertThatThrownBy(() -> refusing.replaceSessionKeys(List.of()))
        .isInstanceOf(AgentCallException.class)
        .hasMessage("no agent route on this backend");
    assertThatThrownBy(() -> refusing.openArchive("tar.gz", true, Duration.ofSeconds(1)))
        .isInstanceOf(AgentCallException.class);
    assertThat(refusing.idleTime()).isEmpty();
  }

  private String url() {
    return "http://127.0.0.1:" + server.getAddress().getPort();
  }

  private void sessionKeys(HttpExchange e) throws IOException {
    if (!ADMIN.equals(e.getRequestHeaders().getFirst(AgentProtocol.ADMIN_KEY_HEADER))) {
      reply(e, 403, "{\"detail\":\"no\"}");
      return;
    }
    seen.put("keys.method", e.getRequestMethod());
    seen.put("keys.admin", e.getRequestHeaders().getFirst(AgentProtocol.ADMIN_KEY_HEADER));
    try (InputStream in = e.getRequestBody()) {
      seen.put("keys.body", new String(in.readAllBytes(), StandardCharsets.UTF_8));
    }
    reply(e, 200, "{}");
  }

  private void archive(HttpExchange e) throws IOException {
    String query = e.getRequestURI().getRawQuery();
    seen.put("archive.query", query);
    seen.put(
        "archive.session",
        String.valueOf(e.getRequestHeaders().getFirst(AgentProtocol.SESSION_KEY_HEADER)));
    if (query.startsWith("format=git-delta")) {
      reply(e, 400, "{\"detail\":\"not a git repository\"}");
    } else if (query.startsWith("format=tar.gz")) {
      e.getResponseHeaders().add("X-Archive-Branch", "feature%2Fa+b");
      reply(e, 200, "bytes");
    } else {
      reply(e, 500, "{}");
    }
  }

  private void environment(HttpExchange e) throws IOException {
    boolean admin = ADMIN.equals(e.getRequestHeaders().getFirst(AgentProtocol.ADMIN_KEY_HEADER));
    reply(
        e,
        admin ? 200 : 401,
        "{\"os\": \"Debian\", \"runtimes\": {\"java\": \"25\"}, \"other\": 1}");
  }

  private static void reply(HttpExchange e, int status, String body) throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    e.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = e.getResponseBody()) {
      out.write(bytes);
    }
  }
}
