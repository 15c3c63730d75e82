package dev.paddock.hardening.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.PageRequest;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxStatus;
import dev.paddock.cli.ServerProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * dockerd restarted under a real {@code paddock server} (its own process) on the Docker backend
 * (host networking, the image CI builds, the gateway on, its reconcile loop every second) with two
 * sandboxes RUNNING: the engine is stopped with SIGTERM and started again as it was started ({@link
 * DockerEngineDaemon}). Without live-restore (Docker's default, and CI's) the containers stop with
 * the engine.
 *
 * <p>While the engine is down: a create and a pause answer 503 naming the container engine as
 * unreachable, promptly (never a 500, never a hang); reconcile passes change nothing. Once it is
 * back: both sandboxes say ERROR with a detail telling that their container stopped and their
 * workspace is kept (not "while starting"); resume brings each back on the same workspace (the file
 * written before) with a new session key, and the old key is refused; the refused create is listed
 * as ERROR saying the engine could not be reached. Then everything is deleted and no container or
 * volume of the test's sandboxes is left; {@link DockerEngineDaemon} checks the engine runs again
 * with the same command line and runtimes.
 */
class DockerRestartTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(180);
  private static final String IMAGE =
      Optional.ofNullable(System.getenv("PADDOCK_TEST_DOCKER_IMAGE"))
          .orElse("paddock/sandbox:bookworm");

  /** Far above an answer that needs no engine, far below a hang. */
  private static final long PROMPT_MS = 5_000;

  @RegisterExtension
  @Order(1)
  final DockerEngineDaemon dockerd = new DockerEngineDaemon();

  @RegisterExtension
  @Order(2)
  final ServerProcess server = new ServerProcess();

  private final HttpClient http = HttpClient.newHttpClient();

  @Test
  void sandboxesStoppedWithTheEngineAreReportedAndResumeOnTheirWorkspaceWithNewKeys()
      throws Exception {
    assertThat(dockerd.liveRestore()).as("this test is written for live-restore off").isFalse();
    DockerEngineDaemon.docker("image", "inspect", IMAGE);
    String url = server.start(dockerSettings());
    Users bob = Users.create(url, ServerProcess.ADMIN_KEY, "bob");
    List<SandboxInfo> before = new ArrayList<>();
    for (String name : List.of("a", "b")) {
      SandboxInfo sandbox = bob.client().create(Optional.empty(), true, TIMEOUT);
      bob.run(sandbox, "printf 'kept-" + name + "\\n' > notes.txt");
      before.add(sandbox);
    }

    List<StoreOutageTest.Answer> whileDown = new ArrayList<>();
    dockerd.stop();
    try {
      whileDown.add(timed(bob, "POST", "/api/v1/sandboxes?wait=true"));
      whileDown.add(timed(bob, "POST", "/api/v1/sandboxes/" + before.get(0).id() + "/pause"));
    } finally {
      dockerd.start();
    }

    assertThat(whileDown)
        .allSatisfy(
            answer -> {
              assertThat(answer.status()).as(answer.toString()).isEqualTo(503);
              assertThat(answer.body())
                  .as(answer.toString())
                  .contains("\"detail\"", "container engine cannot be reached")
                  .doesNotContain("Exception", "docker.sock");
              assertThat(answer.millis()).as(answer.toString()).isLessThan(PROMPT_MS);
            });
    for (SandboxInfo sandbox : before) {
      SandboxInfo stopped = awaitStatus(bob, sandbox, SandboxStatus.ERROR, Duration.ofSeconds(30));
      assertThat(stopped.statusDetail().orElseThrow())
          .contains("container stopped", "workspace is kept")
          .doesNotContain("while starting");
    }
    for (SandboxInfo sandbox : before) {
      HttpResponse<String> resumed =
          bob.send("POST", "/api/v1/sandboxes/" + sandbox.id() + "/resume", TIMEOUT);
      assertThat(resumed.statusCode()).as(resumed.body()).isEqualTo(200);
      SandboxInfo back = awaitStatus(bob, sandbox, SandboxStatus.RUNNING, Duration.ofSeconds(60));
      assertThat(back.sessionApiKey()).isPresent().isNotEqualTo(sandbox.sessionApiKey());
      assertThat(execWith(back, sandbox.sessionApiKey().orElseThrow()).statusCode())
          .as("the key from before the restart")
          .isEqualTo(401);
      String name = before.indexOf(sandbox) == 0 ? "a" : "b";
      assertThat(bob.run(back, "cat notes.txt")).isEqualTo("kept-" + name + "\n");
    }

    List<SandboxInfo> listed = bob.client().list(PageRequest.first(10)).items();
    List<String> ids = listed.stream().map(SandboxInfo::id).toList();
    assertThat(ids).hasSize(3).contains(before.get(0).id(), before.get(1).id());
    assertThat(listed)
        .filteredOn(s -> !before.stream().map(SandboxInfo::id).toList().contains(s.id()))
        .as("the create refused while the engine was down")
        .singleElement()
        .satisfies(
            refused -> {
              assertThat(refused.status()).isEqualTo(SandboxStatus.ERROR);
              assertThat(refused.statusDetail().orElseThrow())
                  .contains("container engine cannot be reached");
            });
    for (String id : ids) {
      bob.client().delete(id);
    }
    assertThat(bob.client().list(PageRequest.first(10)).items()).isEmpty();
    for (String id : ids) {
      String filter = "label=paddock.sandbox-id=" + id;
      assertThat(DockerEngineDaemon.docker("ps", "-aq", "--filter", filter)).as(id).isBlank();
      assertThat(DockerEngineDaemon.docker("volume", "ls", "-q", "--filter", filter))
          .as(id)
          .isBlank();
    }
  }

  /** {@code sandbox} as {@code user} sees it once its status is {@code status}. */
  private static SandboxInfo awaitStatus(
      Users user, SandboxInfo sandbox, SandboxStatus status, Duration atMost) {
    return Awaitility.await(sandbox.id() + " " + status)
        .atMost(atMost)
        .until(() -> user.client().get(sandbox.id()).orElseThrow(), s -> s.status() == status);
  }

  /** A command through the gateway with {@code key} as the session key: its HTTP answer. */
  private HttpResponse<String> execWith(SandboxInfo sandbox, String key) throws Exception {
    HttpRequest request =
        HttpRequest.newBuilder(
                URI.create(
                    sandbox.agentServerUrl().orElseThrow() + "/api/bash/execute_bash_command"))
            .timeout(Duration.ofSeconds(30))
            .header("X-Session-API-Key", key)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("{\"command\": \"true\"}"))
            .build();
    return http.send(request, HttpResponse.BodyHandlers.ofString());
  }

  private static StoreOutageTest.Answer timed(Users user, String method, String path)
      throws Exception {
    return StoreOutageTest.timed(user, method, path, TIMEOUT);
  }

  /** {@code paddock server} on the Docker backend, host networking, the agent as built. */
  private static Map<String, String> dockerSettings() {
    Path agentJar =
        Path.of("..", "paddock-agent-server", "target", "paddock-agent-server-all.jar")
            .toAbsolutePath()
            .normalize();
    assertThat(agentJar).as("build the reactor first").isRegularFile();
    Map<String, String> settings = new HashMap<>();
    settings.put("RUNTIME", "docker");
    settings.put("docker.network", "host");
    settings.put("docker.pull", "never");
    settings.put("docker.image", IMAGE);
    settings.put("docker.agent-jar", agentJar.toString());
    settings.put("docker.stop-grace", "2s");
    settings.put("docker.ready-timeout", "180s");
    return settings;
  }
}
