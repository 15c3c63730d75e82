package dev.paddock.backend.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.paddock.api.ArchiveStore;
import dev.paddock.api.Caller;
import dev.paddock.api.ExposedUrl;
import dev.paddock.api.KeyDigest;
import dev.paddock.api.PageRequest;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxSpecService;
import dev.paddock.api.SandboxStartException;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.StartRequest;
import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.controlplane.ArchiveSettings;
import dev.paddock.controlplane.ArchiveStores;
import dev.paddock.controlplane.ControlPlaneConfig;
import dev.paddock.controlplane.ControlPlaneSandboxService;
import dev.paddock.store.SandboxRecord;
import dev.paddock.store.SandboxStore;
import dev.paddock.store.SandboxStores;
import dev.paddock.store.TestDatabase;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A spec whose image brings its own agent-server (OpenHands' launch contract), through the control
 * plane on the real engine: the image's entry point is configured only by {@code
 * OH_SESSION_API_KEYS_0} and {@code AGENT_SERVER}, Paddock waits for its {@code /alive}, the store
 * keeps only the key's hash, pause stops the container and resume re-creates it with a new key on
 * the same workspace volume. Host networking: each test picks a free port for {@code AGENT_SERVER}
 * through the create's env, so parallel runs do not clash.
 */
class ImageAgentServerTest {
  private static final Caller ALICE = Caller.user("alice");
  private static final Caller ADMIN = Caller.admin("admin");
  private static final Duration READY = Duration.ofSeconds(60);

  private static DockerEngine engine;
  private static Set<String> before;
  private static String image;
  private static String brokenImage;

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private TestDatabase database;
  private SandboxStore store;
  private SandboxBackend backend;
  private ArchiveStore archives;
  private Path archiveDir;
  private ControlPlaneSandboxService service;

  @BeforeAll
  static void buildImage() throws Exception {
    engine = DockerTestEngine.require();
    before = DockerTestEngine.managedContainers(engine);
    image = ImageAgentImage.build();
    // The plain sandbox image as an "agent-server image": its entry point is bash, which exits at
    // once without a terminal, so the start must fail, classified.
    brokenImage = DockerTestEngine.alias(engine, "image-agent-broken");
  }

  @AfterAll
  static void removeImages() {
    if (engine != null) {
      engine.delete("/images/" + brokenImage);
      engine.delete("/images/" + ImageAgentImage.TAG);
    }
  }

  @BeforeEach
  void controlPlane() throws IOException {
    archiveDir = Files.createTempDirectory("paddock-image-agent-archives-");
    archives = ArchiveStores.directory(archiveDir);
    Map<String, String> settings = new HashMap<>();
    settings.put("docker.agent-server-images", image + "," + brokenImage);
    settings.put("docker.ready-timeout", "30s");
    backend = DockerTestEngine.backend(settings);
    SandboxSpecService specs =
        new DockerBackendProvider().specs(DockerTestEngine.settings(settings));
    database = TestDatabase.sqlite();
    store = SandboxStores.open(database.url(), database.user(), database.password());
    service =
        ControlPlaneSandboxService.create(
            store,
            backend,
            specs,
            ControlPlaneConfig.builder("image-agent-test-master-secret-0123456789abcdef")
                .startTimeout(READY)
                .archives(
                    new ArchiveSettings(
                        true, true, ArchiveSettings.TAR_GZ, Duration.ofSeconds(60), "ws"))
                .archiveStore(archives)
                .build());
  }

  @AfterEach
  void deleteAndCheckLeaks() {
    try {
      service.search(ADMIN, PageRequest.first(100)).items().forEach(s -> delete(s.id()));
      backend.list().forEach(backend::destroy);
    } finally {
      service.close();
      backend.close();
      store.close();
      archives.close();
      database.close();
      http.close();
      DockerTestEngine.deleteTree(archiveDir);
    }
    DockerTestEngine.assertNoNewContainers(engine, before);
  }

  private void delete(String id) {
    service.delete(ADMIN, id);
  }

  @Test
  void specsOfAgentServerImagesSayTheImageRunsItsOwnAgent() {
    SandboxSpecService specs =
        new DockerBackendProvider()
            .specs(DockerTestEngine.settings(Map.of("docker.agent-server-images", image)));

    SandboxSpec spec = specs.get(image).orElseThrow();
    assertThat(spec.agentServer()).isEqualTo(SandboxSpec.AgentServer.IMAGE);
    assertThat(spec.workingDir()).isEqualTo("/workspace/project");
    assertThat(specs.defaultSpec().agentServer()).isEqualTo(SandboxSpec.AgentServer.PADDOCK);
  }

  @Test
  void imageAgentBecomesRunningThroughAliveAndTakesTheKeyFromTheLaunchContract() throws Exception {
    int port = freePort();
    Started sandbox = start(port);

    assertThat(sandbox.info().status()).isEqualTo(SandboxStatus.RUNNING);
    assertThat(sandbox.url()).endsWith(":" + port);
    assertThat(sandbox.info().exposedUrls())
        .extracting(ExposedUrl::name)
        .containsExactly(ExposedUrl.AGENT_SERVER, ExposedUrl.VSCODE, "WORKER_1", "WORKER_2");
    assertThat(bash(sandbox.url(), sandbox.key(), "pwd").body()).contains("/workspace/project");
    assertThat(bash(sandbox.url(), "not-the-key", "true").statusCode()).isEqualTo(401);

    // The launch contract, as the container got it: the key (OpenHands' contract) and the port.
    String container = containerOf(sandbox.id());
    List<String> env = containerEnv(container);
    assertThat(env)
        .contains("OH_SESSION_API_KEYS_0=" + sandbox.key(), "AGENT_SERVER=" + port, "VSCODE=8001");
    // Nothing of Paddock's is mounted: the image's own entry point runs.
    assertThat(engine.get("/containers/" + container + "/json").body())
        .asString()
        .doesNotContain("/opt/paddock\",\"ReadOnly\"");

    // The store keeps the hash only.
    SandboxRecord record = store.find(sandbox.id()).orElseThrow();
    assertThat(record.sessionKeyHash()).contains(KeyDigest.sha256Hex(sandbox.key()));
    assertThat(record.toString()).doesNotContain(sandbox.key());
    assertThat(record.runtime().orElseThrow().attributes().values())
        .noneMatch(v -> v.contains(sandbox.key()));
    assertThat(record.runtime().orElseThrow().launchKeyed()).isTrue();
    assertThat(storeFileContains(sandbox.key())).isFalse();
  }

  @Test
  void pauseStopsTheAgentAndResumeRelaunchesItWithANewKeyOnTheSameFiles() {
    Started sandbox = start(freePort());
    assertThat(bash(sandbox.url(), sandbox.key(), "echo kept > marker.txt").statusCode())
        .isEqualTo(200);
    String oldContainer = containerOf(sandbox.id());

    assertThat(service.pause(ALICE, sandbox.id())).isTrue();
    assertThat(service.get(ALICE, sandbox.id()).orElseThrow().status())
        .isEqualTo(SandboxStatus.PAUSED);
    assertThat(reachable(sandbox.url(), sandbox.key())).as("old key after pause").isFalse();
    assertThat(service.getBySessionKey(sandbox.key())).isEmpty();

    SandboxInfo resumed = service.resume(ALICE, sandbox.id()).orElseThrow();
    String newKey = resumed.sessionApiKey().orElseThrow();
    String url = resumed.agentServerUrl().orElseThrow();

    assertThat(resumed.status()).isEqualTo(SandboxStatus.RUNNING);
    assertThat(newKey).isNotEqualTo(sandbox.key());
    assertThat(containerOf(sandbox.id())).as("a new container").isNotEqualTo(oldContainer);
    assertThat(bash(url, sandbox.key(), "true").statusCode()).isEqualTo(401);
    HttpResponse<String> cat = bash(url, newKey, "cat marker.txt");
    assertThat(cat.statusCode()).isEqualTo(200);
    assertThat(cat.body()).contains("kept");
    assertThat(store.find(sandbox.id()).orElseThrow().sessionKeyHash())
        .contains(KeyDigest.sha256Hex(newKey));
    assertThat(service.getBySessionKey(newKey)).isPresent();
  }

  @Test
  void deleteArchivesTheWorkspaceThroughTheImageAgentsArchiveRoute() throws Exception {
    Started sandbox = start(freePort());
    assertThat(bash(sandbox.url(), sandbox.key(), "echo archived > kept.txt").statusCode())
        .isEqualTo(200);

    assertThat(service.delete(ALICE, sandbox.id())).isTrue();

    List<String> keys = archives.list("ws/" + sandbox.id() + "/");
    String tar = keys.stream().filter(k -> k.endsWith(".tar.gz")).findFirst().orElseThrow();
    try (var in = new java.util.zip.GZIPInputStream(archives.open(tar).orElseThrow())) {
      assertThat(new String(in.readAllBytes(), java.nio.charset.StandardCharsets.ISO_8859_1))
          .contains("kept.txt", "archived");
    }
  }

  @Test
  void aPausedImageAgentIsRelaunchedWithAnUnissuedKeyToArchiveBeforeDelete() throws Exception {
    Started sandbox = start(freePort());
    bash(sandbox.url(), sandbox.key(), "echo paused-files > kept.txt");
    service.pause(ALICE, sandbox.id());

    assertThat(service.delete(ALICE, sandbox.id())).isTrue();

    List<String> keys = archives.list("ws/" + sandbox.id() + "/");
    String tar = keys.stream().filter(k -> k.endsWith(".tar.gz")).findFirst().orElseThrow();
    try (var in = new java.util.zip.GZIPInputStream(archives.open(tar).orElseThrow())) {
      assertThat(new String(in.readAllBytes(), java.nio.charset.StandardCharsets.ISO_8859_1))
          .contains("paused-files");
    }
  }

  @Test
  void anImageWhoseEntryPointIsNoAgentServerFailsToStartClassified() {
    SandboxInfo started =
        service.start(
            ALICE,
            StartRequest.builder()
                .specId(brokenImage)
                .env(Map.of("AGENT_SERVER", Integer.toString(freePort())))
                .build());

    assertThatThrownBy(() -> service.waitUntilRunning(ALICE, started.id(), READY))
        .isInstanceOf(SandboxStartException.class)
        .hasMessageStartingWith(RuntimeFailure.Kind.EXITED.safeMessage());
    SandboxInfo failed = service.get(ALICE, started.id()).orElseThrow();
    assertThat(failed.status()).isEqualTo(SandboxStatus.ERROR);
    assertThat(failed.statusDetail())
        .hasValueSatisfying(
            detail ->
                assertThat(detail)
                    .startsWith(RuntimeFailure.Kind.EXITED.safeMessage())
                    .doesNotContain("exit code", "bash"));
  }

  // ------------------------------------------------------------------ helpers

  private record Started(SandboxInfo info, String key) {
    String id() {
      return info.id();
    }

    String url() {
      return info.agentServerUrl().orElseThrow();
    }
  }

  // AGENT_SERVER through the create's env: with host networking the agent binds it directly.
  private Started start(int port) {
    SandboxInfo started =
        service.start(
            ALICE,
            StartRequest.builder()
                .specId(image)
                .env(Map.of("AGENT_SERVER", Integer.toString(port)))
                .build());
    String key = started.sessionApiKey().orElseThrow();
    return new Started(service.waitUntilRunning(ALICE, started.id(), READY), key);
  }

  private String containerOf(String sandboxId) {
    return store
        .find(sandboxId)
        .orElseThrow()
        .runtime()
        .orElseThrow()
        .attributes()
        .get("container");
  }

  @SuppressWarnings("unchecked")
  private static List<String> containerEnv(String container) {
    Map<String, Object> config =
        ContainerState.map(engine.get("/containers/" + container + "/json").json().get("Config"));
    return (List<String>) config.get("Env");
  }

  private boolean storeFileContains(String key) throws IOException {
    String url = database.url();
    Path file = Path.of(url.substring(url.indexOf(':', "jdbc:".length()) + 1));
    if (!Files.isRegularFile(file)) {
      return false;
    }
    return new String(Files.readAllBytes(file), java.nio.charset.StandardCharsets.ISO_8859_1)
        .contains(key);
  }

  private boolean reachable(String url, String key) {
    try {
      return send(url, key, "true").statusCode() == 200;
    } catch (IOException e) {
      return false;
    }
  }

  private HttpResponse<String> bash(String url, String key, String command) {
    try {
      return send(url, key, command);
    } catch (IOException e) {
      throw new AssertionError("agent at " + url + " does not answer", e);
    }
  }

  private HttpResponse<String> send(String url, String key, String command) throws IOException {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(url + "/api/bash/execute_bash_command"))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/json")
            .header("X-Session-API-Key", key)
            .POST(
                HttpRequest.BodyPublishers.ofString(
                    "{\"command\":\"" + command + "\",\"timeout\":20}"))
            .build();
    try {
      return http.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new AssertionError(e);
    }
  }
}
