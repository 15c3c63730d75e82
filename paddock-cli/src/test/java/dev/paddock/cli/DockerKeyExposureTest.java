package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.SandboxInfo;
import dev.paddock.client.PaddockClient;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 15's key exposure scan on the Docker backend, through {@code paddock server} as it runs: a
 * user's API key, the sandbox's session key, the admin key and the master secret appear nowhere a
 * command in the container can read (its environment, every {@code /proc/<pid>/environ} and {@code
 * cmdline} it may open: the agent's, PID 1's), nowhere {@code docker inspect} or {@code docker
 * logs} shows for the container, not in the control plane's data dir, {@code /metrics} or an error.
 * The process backend's counterpart is {@link KeyExposureTest}.
 */
class DockerKeyExposureTest {
  private static final String MASTER_SECRET = "docker-key-scan-master-secret-0123456789abcdef";

  @RegisterExtension final ServerProcess paddock = new ServerProcess();

  @Test
  void noKeyIsReadableInTheContainerItsInspectOrLogsTheDataDirMetricsOrErrors() throws Exception {
    TestDocker.require();
    String url = paddock.start(withMasterSecret(TestDocker.serverSettings()));
    PaddockClient admin = PaddockClient.connect(URI.create(url), ServerProcess.ADMIN_KEY);
    String apiKey = admin.createUser("dora", false).apiKey();
    PaddockClient dora = PaddockClient.connect(URI.create(url), apiKey);
    SandboxInfo sandbox = dora.create(Optional.empty(), true, Duration.ofSeconds(300));
    String sessionKey = dora.get(sandbox.id()).orElseThrow().sessionApiKey().orElseThrow();
    Map<String, String> secrets =
        Map.of(
            "API key", apiKey,
            "session key", sessionKey,
            "admin key", ServerProcess.ADMIN_KEY,
            "master secret", MASTER_SECRET);
    try {
      StringBuilder seen = new StringBuilder();
      int exit =
          dora.agent(sandbox)
              .exec(
                  // Every process the command may look at, the agent and PID 1 among them.
                  "env; for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ;"
                      + " tr '\\0' ' ' < $p/cmdline; echo; done 2>/dev/null; true",
                  60,
                  seen::append,
                  seen::append);
      assertThat(exit).isZero();
      // The scan read real process data: the agent's own command line is among it.
      assertThat(seen).contains("paddock-agent.jar", "--secrets-stdin");
      assertNoneOf(secrets, "a command's view of env, environ and cmdline", seen.toString());

      String container = containerOf(sandbox.id());
      String inspect = TestDocker.run("inspect", container);
      assertThat(inspect).as("docker inspect").contains(sandbox.id());
      assertNoneOf(secrets, "docker inspect " + container, inspect);
      assertNoneOf(secrets, "docker logs " + container, TestDocker.run("logs", container));

      assertNoneOf(secrets, "GET /metrics", get(url + "/metrics", ServerProcess.ADMIN_KEY));
      String wrongKind = get(url + "/api/v1/sandboxes", sessionKey);
      assertThat(wrongKind).contains("detail");
      assertNoneOf(secrets, "an error answering a session key used as an API key", wrongKind);

      try (Stream<Path> files = Files.walk(paddock.dataDir())) {
        for (Path file : files.filter(Files::isRegularFile).toList()) {
          String text = new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
          assertNoneOf(secrets, file.toString(), text);
        }
      }
    } finally {
      dora.delete(sandbox.id());
    }
    Awaitility.await("the container is gone")
        .atMost(Duration.ofSeconds(60))
        .until(
            () ->
                TestDocker.run("ps", "-aq", "--filter", "label=paddock.sandbox-id=" + sandbox.id())
                    .isBlank());
  }

  private static Map<String, String> withMasterSecret(Map<String, String> settings) {
    Map<String, String> all = new java.util.HashMap<>(settings);
    all.put("PADDOCK_MASTER_SECRET", MASTER_SECRET);
    return all;
  }

  private static String get(String url, String bearer) throws Exception {
    return java.net.http.HttpClient.newHttpClient()
        .send(
            java.net.http.HttpRequest.newBuilder(URI.create(url))
                .header("Authorization", "Bearer " + bearer)
                .build(),
            java.net.http.HttpResponse.BodyHandlers.ofString())
        .body();
  }

  private static void assertNoneOf(Map<String, String> secrets, String where, String text) {
    secrets.forEach(
        (name, value) -> assertThat(text).as(name + " in " + where).doesNotContain(value));
  }

  private static String containerOf(String sandboxId) throws Exception {
    List<String> ids =
        TestDocker.run("ps", "-q", "--filter", "label=paddock.sandbox-id=" + sandboxId)
            .lines()
            .toList();
    assertThat(ids).as("the sandbox's container").hasSize(1);
    return ids.getFirst();
  }

  /** A docker CLI call's output (stdout and stderr); fails the test when it exits non-zero. */
}
