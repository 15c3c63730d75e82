package dev.paddock.runtimeapi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.jr.ob.JSON;
import dev.paddock.api.KeyDigest;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.backend.process.ProcessBackendProvider;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The runtime API as OpenHands' remote sandbox service drives it, over a real socket, with the real
 * process backend (agent-servers as child processes) under it: start, poll the session, batch,
 * list, pause, resume with a new key, stop; and the error answers on the way.
 */
class OpenHandsClientSequenceTest {
  private static final String API_KEY = "runtime-api-test-key-0123456789";
  private static final String SECRET = "runtime-api-test-secret-0123456789abcdef";

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private Path dataDir;
  private SandboxBackend backend;
  private RuntimeApi api;

  @BeforeEach
  void startRuntimeApi() throws IOException {
    dataDir = Files.createTempDirectory("paddock-runtime-api-test-");
    startRuntimeApi(5);
  }

  private void startRuntimeApi(int maxSandboxes) {
    startRuntimeApi(maxSandboxes, SECRET);
  }

  private void startRuntimeApi(int maxSandboxes, String secret) {
    Map<String, String> settings =
        Map.of(
            "PADDOCK_DATA_DIR", dataDir.toString(),
            "agent.command", ProcessBackendProvider.classPathAgentCommand(),
            "process.stop-grace", "3s");
    ProcessBackendProvider provider = new ProcessBackendProvider();
    backend = provider.create(settings);
    api =
        RuntimeApi.start(
            new RuntimeApiConfig("127.0.0.1", 0, API_KEY, maxSandboxes, secret, dataDir),
            backend,
            provider.specs(settings));
  }

  @AfterEach
  void stopEverything() throws IOException {
    try {
      for (Object runtime : (List<?>) call("GET", "/list", null).json().get("runtimes")) {
        call("POST", "/stop", Map.of("runtime_id", ((Map<?, ?>) runtime).get("runtime_id")));
      }
    } finally {
      api.close();
      backend.close();
      http.close();
    }
    Awaitility.await("no agent process left behind")
        .atMost(Duration.ofSeconds(15))
        .untilAsserted(
            () ->
                assertThat(ProcessHandle.current().descendants().filter(ProcessHandle::isAlive))
                    .isEmpty());
    try (var paths = Files.walk(dataDir)) {
      paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  @Test
  void anOpenHandsClientSequenceStartsPollsPausesResumesWithANewKeyAndStops() throws IOException {
    Reply started = call("POST", "/start", openHandsStart("oh-sandbox-1"));
    assertThat(started.status()).isEqualTo(200);
    Map<String, Object> runtime = started.json();
    assertThat(runtime)
        .containsEntry("session_id", "oh-sandbox-1")
        .containsEntry("status", "running")
        .containsEntry("pod_status", "ready");
    String runtimeId = (String) runtime.get("runtime_id");
    String url = (String) runtime.get("url");
    String key = (String) runtime.get("session_api_key");
    assertThat(key).hasSizeGreaterThanOrEqualTo(43);
    assertThat(agentStatus(url, Optional.of(key))).isEqualTo(200);
    assertThat(agentStatus(url, Optional.empty())).isEqualTo(401);

    Map<String, Object> polled = call("GET", "/sessions/oh-sandbox-1", null).json();
    assertThat(polled)
        .containsEntry("runtime_id", runtimeId)
        .containsEntry("session_api_key", key)
        .containsEntry("url", url)
        .containsEntry("status", "running");

    List<?> batch = call("GET", "/sessions/batch?ids=oh-sandbox-1&ids=never-made", null).list();
    assertThat(batch).hasSize(2);
    assertThat(map(batch.get(0))).containsEntry("runtime_id", runtimeId);
    assertThat(batch.get(1)).isNull();
    assertThat((List<?>) call("GET", "/list", null).json().get("runtimes")).hasSize(1);

    Reply runningResume = call("POST", "/resume", Map.of("runtime_id", runtimeId));
    assertThat(runningResume.status()).isEqualTo(409);
    assertThat((String) runningResume.json().get("detail")).contains("is running");

    Map<String, Object> paused = call("POST", "/pause", Map.of("runtime_id", runtimeId)).json();
    assertThat(paused)
        .containsEntry("status", "paused")
        .containsEntry("pod_status", "not found")
        .containsEntry("session_api_key", null)
        .containsEntry("url", null);
    assertThat(call("GET", "/sessions/oh-sandbox-1", null).json())
        .containsEntry("status", "paused");

    Map<String, Object> resumed = call("POST", "/resume", Map.of("runtime_id", runtimeId)).json();
    assertThat(resumed).containsEntry("status", "running");
    String newKey = (String) resumed.get("session_api_key");
    assertThat(newKey).isNotNull().isNotEqualTo(key);
    String resumedUrl = (String) resumed.get("url");
    assertThat(agentStatus(resumedUrl, Optional.of(newKey))).isEqualTo(200);
    assertThat(agentStatus(resumedUrl, Optional.of(key))).isEqualTo(401);
    assertThat(call("GET", "/sessions/oh-sandbox-1", null).json())
        .containsEntry("session_api_key", newKey);

    assertThat(call("POST", "/stop", Map.of("runtime_id", runtimeId)).status()).isEqualTo(200);
    assertThat(call("GET", "/sessions/oh-sandbox-1", null).status()).isEqualTo(404);
    assertThat(call("POST", "/stop", Map.of("runtime_id", runtimeId)).status()).isEqualTo(404);
    assertThat(agentStatus(resumedUrl, Optional.of(newKey))).isEqualTo(-1);
  }

  @Test
  void everyRouteNeedsTheApiKey() throws IOException {
    HttpResponse<String> response =
        send(HttpRequest.newBuilder(uri("/list")).GET().header("X-API-Key", "wrong-key"));
    assertThat(response.statusCode()).isEqualTo(401);
    assertThat(response.body()).contains("X-API-Key");
    assertThat(send(HttpRequest.newBuilder(uri("/paddock/capacity")).GET()).statusCode())
        .isEqualTo(401);
  }

  @Test
  void badStartsAreRefusedWithADetailAndLeaveNothingBehind() throws IOException {
    assertDetail(call("POST", "/start", Map.of("image", "x")), 422, "session_id");
    assertDetail(
        call("POST", "/start", Map.of("image", "x", "session_id", "a", "timout", 3)),
        422,
        "timout");
    assertDetail(
        call("POST", "/start", Map.of("image", "x", "session_id", "a", "resource_factor", 3)),
        422,
        "resource_factor");
    assertDetail(
        call("POST", "/start", Map.of("image", "x", "session_id", "../etc")), 422, "session_id");
    assertDetail(
        call(
            "POST",
            "/start",
            Map.of("image", "x", "session_id", "a", "paddock_session_key_sha256", List.of("no"))),
        422,
        "64 hex");
    HttpResponse<String> malformed =
        send(
            HttpRequest.newBuilder(uri("/start"))
                .header("X-API-Key", API_KEY)
                .POST(HttpRequest.BodyPublishers.ofString("{\"image\":")));
    assertThat(malformed.statusCode()).isEqualTo(400);
    assertThat(malformed.body()).contains("detail");
    assertDetail(call("POST", "/pause", Map.of()), 422, "runtime_id");
    assertDetail(call("POST", "/pause", Map.of("runtime_id", "nope")), 404, "nope");
    assertDetail(call("GET", "/sessions/nope", null), 404, "nope");
    assertThat((List<?>) call("GET", "/list", null).json().get("runtimes")).isEmpty();
  }

  @Test
  void aTakenSessionIdIsAConflictAndPastCapacityIsA429() throws IOException {
    api.close();
    backend.close();
    startRuntimeApi(1);
    assertThat(call("GET", "/paddock/capacity", null).json()).containsEntry("free", 1);
    assertThat(call("POST", "/start", openHandsStart("one")).status()).isEqualTo(200);
    assertThat(call("GET", "/paddock/capacity", null).json())
        .containsEntry("free", 0)
        .containsEntry("max_sandboxes", 1);
    assertDetail(call("POST", "/start", openHandsStart("one")), 409, "exists");
    assertDetail(call("POST", "/start", openHandsStart("two")), 429, "maximum");
  }

  @Test
  void aPaddockCallerKeysTheAgentItselfAndNeverGetsAKey() throws IOException {
    String key = "control-plane-issued-session-key";
    Map<String, Object> body =
        Map.of(
            "image", "process-default",
            "session_id", "pdk-1",
            "paddock_session_key_sha256", List.of(KeyDigest.sha256Hex(key)),
            "paddock_admin_key_sha256", KeyDigest.sha256Hex("admin"),
            "paddock_client", "cp-test");
    Map<String, Object> runtime = call("POST", "/start", body).json();
    assertThat(runtime)
        .containsEntry("status", "running")
        .containsEntry("session_api_key", null)
        .containsEntry("paddock_client", "cp-test");
    assertThat(agentStatus((String) runtime.get("url"), Optional.of(key))).isEqualTo(200);

    Map<String, Object> paused =
        call("POST", "/pause", Map.of("runtime_id", runtime.get("runtime_id"))).json();
    assertThat(paused).containsEntry("status", "paused");
    Map<String, Object> resumed =
        call("POST", "/resume", Map.of("runtime_id", runtime.get("runtime_id"))).json();
    assertThat(resumed).containsEntry("status", "running").containsEntry("session_api_key", null);
    assertThat(agentStatus((String) resumed.get("url"), Optional.of(key))).isEqualTo(200);
  }

  @Test
  void aFailedStartIsReportedInErrorWithASafeDetailAndCanBeStopped() throws IOException {
    Map<String, Object> body =
        Map.of(
            "image", "process-default",
            "session_id", "fails",
            "paddock_command", List.of("bash", "-c", "echo 'secret /srv/x' >&2; exit 3"));
    Map<String, Object> runtime = call("POST", "/start", body).json();
    assertThat(runtime)
        .containsEntry("status", "error")
        .containsEntry("pod_status", "failed")
        .containsEntry("paddock_failure_kind", "EXITED");
    assertThat((String) runtime.get("status_detail")).doesNotContain("/srv/x");
    assertThat(call("POST", "/stop", Map.of("runtime_id", runtime.get("runtime_id"))).status())
        .isEqualTo(200);
  }

  @Test
  void aRestartedRuntimeApiKnowsEverySessionAndReadoptsItsRuntime() throws IOException {
    Map<String, Object> own = call("POST", "/start", openHandsStart("oh-kept")).json();
    String ownKey = (String) own.get("session_api_key");
    String callerKey = "control-plane-issued-session-key";
    Map<String, Object> keyed = call("POST", "/start", paddockStart("pdk-kept", callerKey)).json();
    call("POST", "/pause", Map.of("runtime_id", keyed.get("runtime_id")));
    Map<String, Object> failed = call("POST", "/start", failingStart("fails-kept")).json();

    restart(SECRET);

    assertThat((List<?>) call("GET", "/list", null).json().get("runtimes")).hasSize(3);
    Map<String, Object> ownNow = call("GET", "/sessions/oh-kept", null).json();
    assertThat(ownNow)
        .containsEntry("runtime_id", own.get("runtime_id"))
        .containsEntry("status", "running")
        .containsEntry("session_api_key", ownKey)
        .containsEntry("created_at", own.get("created_at"));
    assertThat(agentStatus((String) ownNow.get("url"), Optional.of(ownKey))).isEqualTo(200);
    assertThat(call("GET", "/sessions/pdk-kept", null).json())
        .containsEntry("status", "paused")
        .containsEntry("paddock_client", "cp-test");
    assertThat(call("GET", "/sessions/fails-kept", null).json())
        .containsEntry("runtime_id", failed.get("runtime_id"))
        .containsEntry("status", "error")
        .containsEntry("paddock_failure_kind", "EXITED");
    // The restarted API still derives the agents' admin keys: pause revokes, resume re-keys.
    call("POST", "/pause", Map.of("runtime_id", own.get("runtime_id")));
    Map<String, Object> resumed =
        call("POST", "/resume", Map.of("runtime_id", own.get("runtime_id"))).json();
    String newKey = (String) resumed.get("session_api_key");
    assertThat(newKey).isNotNull().isNotEqualTo(ownKey);
    assertThat(agentStatus((String) resumed.get("url"), Optional.of(newKey))).isEqualTo(200);
    assertThat(agentStatus((String) resumed.get("url"), Optional.of(ownKey))).isEqualTo(401);
    Map<String, Object> keyedNow =
        call("POST", "/resume", Map.of("runtime_id", keyed.get("runtime_id"))).json();
    assertThat(agentStatus((String) keyedNow.get("url"), Optional.of(callerKey))).isEqualTo(200);
    assertThat(call("POST", "/stop", Map.of("runtime_id", failed.get("runtime_id"))).status())
        .isEqualTo(200);
  }

  @Test
  void theSessionsFileHoldsKeyDigestsOnlyAndIsTheOwnersAlone() throws IOException {
    Map<String, Object> own = call("POST", "/start", openHandsStart("oh-file")).json();
    String callerKey = "control-plane-issued-session-key";
    call("POST", "/start", paddockStart("pdk-file", callerKey));
    call("POST", "/pause", Map.of("runtime_id", own.get("runtime_id")));
    String nextKey =
        (String)
            call("POST", "/resume", Map.of("runtime_id", own.get("runtime_id")))
                .json()
                .get("session_api_key");

    Path file = dataDir.resolve("runtime-api/sessions.json");
    String saved = Files.readString(file);

    assertThat(saved)
        .contains(KeyDigest.sha256Hex(callerKey), "oh-file", "pdk-file")
        .doesNotContain(
            (String) own.get("session_api_key"), nextKey, callerKey, SECRET, API_KEY, "12000");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(file)))
        .isEqualTo("rw-------");
  }

  @Test
  void aRestartWithAnotherSecretKeepsItsSessionsInErrorUntilStopped() throws IOException {
    Map<String, Object> own = call("POST", "/start", openHandsStart("oh-lost")).json();

    restart("another-runtime-api-secret-0123456789abcdef");

    Map<String, Object> lost = call("GET", "/sessions/oh-lost", null).json();
    assertThat(lost)
        .containsEntry("status", "error")
        .containsEntry("session_api_key", null)
        .containsEntry("paddock_failure_kind", "runtime-api.keys-lost");
    assertDetail(
        call("POST", "/resume", Map.of("runtime_id", own.get("runtime_id"))), 409, "secret");
    assertThat(call("POST", "/stop", Map.of("runtime_id", own.get("runtime_id"))).status())
        .isEqualTo(200);
    assertThat(agentStatus((String) own.get("url"), Optional.empty())).isEqualTo(-1);
  }

  @Test
  void anUnreadableSessionsFileStopsTheStartNamingIt() throws IOException {
    api.close();
    backend.close();
    Path file = dataDir.resolve("runtime-api/sessions.json");
    Files.createDirectories(file.getParent());
    Files.writeString(file, "{\"version\": 1, \"sessions\": [{\"session_id\": 3");

    assertThatThrownBy(() -> startRuntimeApi(5))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining(file.toString());
    backend.close();
    Files.delete(file);
    startRuntimeApi(5);
  }

  /** Stops the runtime API as a shutdown would (its runtimes keep running) and starts it again. */
  private void restart(String secret) {
    api.close();
    backend.close();
    startRuntimeApi(5, secret);
  }

  private static Map<String, Object> paddockStart(String sessionId, String key) {
    return Map.of(
        "image",
        "process-default",
        "session_id",
        sessionId,
        "paddock_session_key_sha256",
        List.of(KeyDigest.sha256Hex(key)),
        "paddock_admin_key_sha256",
        KeyDigest.sha256Hex("admin"),
        "paddock_client",
        "cp-test");
  }

  private static Map<String, Object> failingStart(String sessionId) {
    return Map.of(
        "image",
        "process-default",
        "session_id",
        sessionId,
        "paddock_command",
        List.of("bash", "-c", "echo 'secret /srv/x' >&2; exit 3"));
  }

  @Test
  void warmConfigsListTheLocalSpecs() throws IOException {
    List<?> configs =
        (List<?>) call("GET", "/api/warm-runtime-configs", null).json().get("configs");
    assertThat(configs).isNotEmpty();
    assertThat(map(configs.get(0)))
        .containsEntry("name", "process-default")
        .containsKeys("image", "command", "environment", "working_dir");
  }

  private static Map<String, Object> openHandsStart(String sessionId) {
    // As OpenHands' RemoteSandboxService sends it.
    return Map.of(
        "image",
        "ghcr.io/openhands/agent-server:1.0.0-python",
        "command",
        List.of("/usr/local/bin/openhands-agent-server", "--port", "60000"),
        "working_dir",
        "/workspace",
        "environment",
        Map.of("WORKER_1", "12000", "WORKER_2", "12001"),
        "session_id",
        sessionId,
        "resource_factor",
        1,
        "run_as_user",
        10001,
        "run_as_group",
        10001,
        "fs_group",
        10001);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object json) {
    return (Map<String, Object>) json;
  }

  private static void assertDetail(Reply reply, int status, String mentions) throws IOException {
    assertThat(reply.status()).isEqualTo(status);
    assertThat((String) reply.json().get("detail")).contains(mentions);
  }

  private record Reply(int status, String body) {
    Map<String, Object> json() throws IOException {
      return JSON.std.mapFrom(body);
    }

    List<?> list() throws IOException {
      return JSON.std.listFrom(body);
    }
  }

  private Reply call(String method, String path, Object body) throws IOException {
    HttpRequest.Builder request = HttpRequest.newBuilder(uri(path)).header("X-API-Key", API_KEY);
    if (body == null) {
      request.method(method, HttpRequest.BodyPublishers.noBody());
    } else {
      request
          .header("Content-Type", "application/json")
          .method(method, HttpRequest.BodyPublishers.ofString(JSON.std.asString(body)));
    }
    HttpResponse<String> response = send(request.timeout(Duration.ofSeconds(60)));
    return new Reply(response.statusCode(), response.body());
  }

  private URI uri(String path) {
    return URI.create("http://127.0.0.1:" + api.port() + path);
  }

  private HttpResponse<String> send(HttpRequest.Builder request) throws IOException {
    try {
      return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }

  /** What the agent answers a command with this key; -1 when nothing answers. */
  private int agentStatus(String url, Optional<String> key) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(url + "/api/bash/execute_bash_command"))
            .timeout(Duration.ofSeconds(20))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("{\"command\":\"true\",\"timeout\":10}"));
    key.ifPresent(k -> request.header("X-Session-API-Key", k));
    try {
      return http.send(request.build(), HttpResponse.BodyHandlers.ofString()).statusCode();
    } catch (IOException e) {
      return -1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError(e);
    }
  }
}
