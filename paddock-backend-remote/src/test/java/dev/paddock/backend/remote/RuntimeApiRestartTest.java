package dev.paddock.backend.remote;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.ExposedUrl;
import dev.paddock.api.KeyDigest;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeRequest;
import dev.paddock.api.spi.SandboxBackend;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A real runtime API process stopped (SIGTERM, as a service manager does) and started again on its
 * data directory: the control plane's sandboxes on it are still known, with their state, labels and
 * agents, and can be driven as before.
 */
class RuntimeApiRestartTest {
  private static final String KEY = "restart-test-session-key";
  private static final String ADMIN_KEY = "restart-test-admin-key";

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private RuntimeApiProcesses runtimeApis;
  private SandboxBackend remote;

  @BeforeEach
  void startRuntimeApi() {
    runtimeApis = RuntimeApiProcesses.start(1, 10);
  }

  @AfterEach
  void stopEverything() {
    try {
      if (remote != null) {
        remote.list().forEach(remote::destroy);
        remote.close();
      }
      Awaitility.await("no agent left in the runtime API's data directory")
          .atMost(Duration.ofSeconds(15))
          .pollInterval(Duration.ofMillis(50))
          .untilAsserted(() -> assertThat(runtimeApis.processesInDataDirs()).isEmpty());
    } finally {
      runtimeApis.close();
      http.close();
    }
  }

  @Test
  void aRestartedRuntimeApiStillKnowsAndDrivesItsSandboxes() throws Exception {
    remote = backend();
    RuntimeHandle running = remote.start(request("sb-restart-running"));
    RuntimeHandle paused = remote.start(request("sb-restart-paused"));
    remote.pause(paused);
    String saved =
        Files.readString(runtimeApis.hosts().get(0).dataDir().resolve("runtime-api/sessions.json"));
    assertThat(saved).contains(KeyDigest.sha256Hex(KEY)).doesNotContain(KEY, ADMIN_KEY);

    runtimeApis.restart(0);
    SandboxBackend restartedControlPlane = backend();

    try {
      assertThat(restartedControlPlane.list())
          .extracting(RuntimeHandle::sandboxId)
          .contains(running.sandboxId(), paused.sandboxId());
      assertThat(restartedControlPlane.inspect(paused).status()).isEqualTo(SandboxStatus.PAUSED);
      assertThat(agentStatus(restartedControlPlane, running, KEY)).isEqualTo(200);
      assertThat(agentStatus(restartedControlPlane, running, "another-key")).isEqualTo(401);
      RuntimeHandle resumed = restartedControlPlane.resume(paused);
      assertThat(agentStatus(restartedControlPlane, resumed, KEY)).isEqualTo(200);
      restartedControlPlane.destroy(running);
      assertThat(restartedControlPlane.inspect(running).status()).isEqualTo(SandboxStatus.MISSING);
    } finally {
      restartedControlPlane.close();
    }
  }

  private SandboxBackend backend() {
    return runtimeApis.backend("restart-test");
  }

  private static RuntimeRequest request(String id) {
    return new RuntimeRequest(
        id,
        SandboxSpec.builder("process-default").build(),
        Map.of(),
        List.of(KeyDigest.sha256Hex(KEY)),
        KeyDigest.sha256Hex(ADMIN_KEY));
  }

  /** What the sandbox's agent answers a call with {@code key}. */
  private int agentStatus(SandboxBackend backend, RuntimeHandle handle, String key)
      throws IOException, InterruptedException {
    String url =
        backend.inspect(handle).urls().stream()
            .filter(u -> u.name().equals(ExposedUrl.AGENT_SERVER))
            .map(ExposedUrl::url)
            .findFirst()
            .orElseThrow(() -> new AssertionError(handle.sandboxId() + " exposes no agent URL"));
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(url + "/api/sessions"))
            .timeout(Duration.ofSeconds(20))
            .header("X-Session-API-Key", key)
            .build();
    return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
  }
}
