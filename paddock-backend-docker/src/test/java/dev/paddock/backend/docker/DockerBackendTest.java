package dev.paddock.backend.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.paddock.api.Resources;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.RuntimeFailure.Kind;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeStartException;
import dev.paddock.api.spi.RuntimeState;
import dev.paddock.api.spi.SandboxBackend;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The Docker backend on a real engine, without the control plane: labels, status read from the
 * container, pause and resume (also of a container that stopped), deletion with the workspace
 * volume, and every classified start failure leaving nothing behind. Host networking: every
 * connection is to loopback.
 */
class DockerBackendTest {
  private DockerEngine engine;
  private Set<String> before;
  private SandboxBackend backend;
  private Sandboxes sandboxes;

  @BeforeEach
  void setUp() {
    engine = DockerTestEngine.require();
    before = DockerTestEngine.managedContainers(engine);
    backend = DockerTestEngine.backend(Map.of());
    sandboxes = new Sandboxes(backend);
  }

  @AfterEach
  void tearDown() {
    if (sandboxes != null) {
      try {
        sandboxes.close();
      } finally {
        backend.close();
        DockerTestEngine.assertNoNewContainers(engine, before);
      }
    }
  }

  private static SandboxSpec spec() {
    return SandboxSpec.builder(DockerTestEngine.IMAGE).workingDir("/workspace").build();
  }

  private Map<String, Object> container(String id) {
    return engine.get("/containers/" + id + "/json").json();
  }

  @Test
  void perSandboxImageEnvWorkingDirAndLimitsReachTheContainer() {
    String copy = DockerTestEngine.alias(engine, "per-sandbox-copy");
    try {
      SandboxSpec spec =
          SandboxSpec.builder("not-an-image-but-a-spec-id")
              .image(copy)
              .workingDir("/workspace/project")
              .env(Map.of("FROM_SPEC", "spec-value"))
              .resources(
                  new Resources(
                      OptionalDouble.of(0.5),
                      OptionalLong.of(300L << 20),
                      OptionalInt.of(100),
                      OptionalLong.empty()))
              .build();

      var sandbox = sandboxes.start("sb-per-sandbox", spec);

      Map<String, Object> json = container(sandbox.container());
      Map<String, Object> config = ContainerState.map(json.get("Config"));
      assertThat(config.get("Image")).isEqualTo(copy);
      assertThat(config.get("WorkingDir")).isEqualTo("/workspace/project");
      assertThat(ContainerState.map(config.get("Labels")))
          .containsEntry("paddock.spec-id", "not-an-image-but-a-spec-id");
      Map<String, Object> host = ContainerState.map(json.get("HostConfig"));
      assertThat(((Number) host.get("Memory")).longValue()).isEqualTo(300L << 20);
      assertThat(((Number) host.get("MemorySwap")).longValue()).isEqualTo(300L << 20);
      assertThat(((Number) host.get("NanoCpus")).longValue()).isEqualTo(500_000_000L);
      assertThat(((Number) host.get("PidsLimit")).longValue()).isEqualTo(100);
      Map<String, Object> seen = sandboxes.exec(sandbox, "pwd; echo $FROM_SPEC $SANDBOX_VAR", 30);
      assertThat(Sandboxes.stdout(seen))
          .as(seen.toString())
          .startsWith("/workspace/project\nspec-value");
      assertThat(sandbox.handle().unenforcedLimits()).isEmpty();
    } finally {
      // Only the tag goes (the image keeps its own name); force: the container still uses it.
      engine.delete("/images/" + copy + "?force=1&noprune=1");
    }
  }

  @Test
  void aDiskLimitTheStorageDriverCannotEnforceIsReportedOnTheHandle() {
    SandboxSpec spec =
        SandboxSpec.builder(DockerTestEngine.IMAGE)
            .workingDir("/workspace")
            .resources(
                new Resources(
                    OptionalDouble.empty(),
                    OptionalLong.empty(),
                    OptionalInt.empty(),
                    OptionalLong.of(1L << 30)))
            .build();

    var sandbox = sandboxes.start("sb-disk", spec);

    Map<String, Object> host = ContainerState.map(container(sandbox.container()).get("HostConfig"));
    org.junit.jupiter.api.Assumptions.assumeTrue(
        host.get("StorageOpt") == null, "this engine's storage driver enforces disk limits");
    assertThat(sandbox.handle().unenforcedLimits()).containsExactly("disk");
    assertThat(backend.list())
        .filteredOn(h -> h.sandboxId().equals("sb-disk"))
        .singleElement()
        .satisfies(h -> assertThat(h.unenforcedLimits()).containsExactly("disk"));
  }

  @Test
  void containerCarriesItsLabelsLimitsAndOnlyTheWorkspaceAndBundleMounts() {
    var sandbox = sandboxes.start("sb-labels", spec());

    Map<String, Object> json = container(sandbox.container());
    Map<String, Object> labels =
        ContainerState.map(ContainerState.map(json.get("Config")).get("Labels"));
    assertThat(labels)
        .containsEntry("paddock.managed", "true")
        .containsEntry("paddock.sandbox-id", "sb-labels")
        .containsEntry("paddock.spec-id", DockerTestEngine.IMAGE);
    Map<String, Object> host = ContainerState.map(json.get("HostConfig"));
    assertThat(((Number) host.get("Memory")).longValue()).isEqualTo(512L << 20);
    assertThat(((Number) host.get("PidsLimit")).longValue()).isEqualTo(256);
    assertThat(host.get("Privileged")).isEqualTo(false);
    List<?> mounts = (List<?>) json.get("Mounts");
    assertThat(mounts)
        .extracting(m -> ContainerState.map(m).get("Destination"))
        .containsExactlyInAnyOrder("/opt/paddock", "/workspace");
    assertThat(mounts)
        .extracting(m -> String.valueOf(ContainerState.map(m).get("Source")))
        .noneMatch(source -> source.contains("docker.sock"));
    assertThat(backend.inspect(sandbox.handle()).status()).isEqualTo(SandboxStatus.RUNNING);
  }

  @Test
  void pauseFreezesEveryProcessAndResumeThawsThem() {
    var sandbox = sandboxes.start("sb-pause", spec());
    sandboxes.exec(sandbox, "sleep 300 >/dev/null 2>&1 &", 10);

    backend.pause(sandbox.handle());
    backend.pause(sandbox.handle()); // idempotent

    assertThat(backend.inspect(sandbox.handle()).status()).isEqualTo(SandboxStatus.PAUSED);
    assertThat(
            String.valueOf(
                ContainerState.map(container(sandbox.container()).get("State")).get("Status")))
        .isEqualTo("paused");

    RuntimeHandle resumed = backend.resume(sandbox.handle());
    assertThat(backend.inspect(resumed).status()).isEqualTo(SandboxStatus.RUNNING);
    assertThat(Sandboxes.stdout(sandboxes.exec(resumed, sandbox.key(), "echo thawed", 10)))
        .contains("thawed");
  }

  @Test
  void aStoppedContainerIsReportedWithItsExitAndResumesWithTheSameWorkspace() {
    var sandbox = sandboxes.start("sb-restart", spec());
    sandboxes.exec(sandbox, "echo kept > /workspace/kept.txt", 10);

    assertThat(engine.post("/containers/" + sandbox.container() + "/kill", null).status())
        .isEqualTo(204);
    org.awaitility.Awaitility.await()
        .atMost(java.time.Duration.ofSeconds(20))
        .until(() -> backend.inspect(sandbox.handle()).status() == SandboxStatus.ERROR);
    RuntimeState stopped = backend.inspect(sandbox.handle());
    assertThat(stopped.failure().orElseThrow().kind()).isEqualTo(DockerBackend.STOPPED);
    assertThat(stopped.failure().orElseThrow().safeMessage())
        .contains("exit code 137, signal 9 (SIGKILL)")
        .doesNotContain("while starting");

    RuntimeHandle resumed = backend.resume(sandbox.handle());
    sandboxes.track(resumed);
    // The restarted agent holds only its admin key: hand it a session key the way the control
    // plane does (PUT /admin/session-keys), then read the workspace.
    String key = Sandboxes.newKey();
    AdminKeys.rotate(sandboxes.url(resumed), sandbox.adminKey(), key);
    assertThat(Sandboxes.stdout(sandboxes.exec(resumed, key, "cat /workspace/kept.txt", 10)))
        .contains("kept");
  }

  @Test
  void destroyRemovesTheContainerAndItsWorkspaceVolume() {
    var sandbox = sandboxes.start("sb-destroy", spec());
    List<?> mounts = (List<?>) container(sandbox.container()).get("Mounts");
    String volume =
        mounts.stream()
            .map(ContainerState::map)
            .filter(m -> "/workspace".equals(m.get("Destination")))
            .map(m -> String.valueOf(m.get("Name")))
            .findFirst()
            .orElseThrow();

    backend.destroy(sandbox.handle());
    backend.destroy(sandbox.handle()); // idempotent

    assertThat(backend.inspect(sandbox.handle())).isEqualTo(RuntimeState.missing());
    assertThat(engine.get("/volumes/" + volume).status()).isEqualTo(404);
  }

  @Test
  void aRestartedBackendFindsTheSandboxByItsLabels() {
    var sandbox = sandboxes.start("sb-adopt", spec());
    try (SandboxBackend second = DockerTestEngine.backend(Map.of())) {
      List<RuntimeHandle> found = second.list();
      RuntimeHandle adopted =
          found.stream().filter(h -> h.sandboxId().equals("sb-adopt")).findFirst().orElseThrow();
      assertThat(adopted.attributes())
          .containsEntry("port", sandbox.handle().attributes().get("port"));
      // RUNNING needs the agent's /alive within the probe's second; on a loaded machine the first
      // probe of a fresh backend can miss it and say STARTING, which is true but not the point.
      Awaitility.await()
          .atMost(Duration.ofSeconds(20))
          .untilAsserted(
              () -> assertThat(second.inspect(adopted).status()).isEqualTo(SandboxStatus.RUNNING));
    }
    // Another Paddock on the same engine (another instance) neither adopts nor reaps it.
    try (SandboxBackend other = DockerTestEngine.backend(Map.of("docker.instance", "another"))) {
      assertThat(other.list()).noneMatch(h -> h.sandboxId().equals("sb-adopt"));
    }
    assertThat(backend.inspect(sandbox.handle()).status()).isEqualTo(SandboxStatus.RUNNING);
  }

  // Diagnosed start failures: a kind, the engine's detail for the log, nothing left behind.

  private Kind failureOf(SandboxSpec spec) {
    try {
      sandboxes.start("sb-failing", spec);
    } catch (RuntimeStartException e) {
      return e.failure().kind();
    }
    throw new AssertionError("the start succeeded");
  }

  @Test
  void aMissingImageIsImageMissing() {
    assertThat(failureOf(SandboxSpec.builder("paddock-test/no-such-image:never").build()))
        .isEqualTo(Kind.IMAGE_MISSING);
  }

  @Test
  void anImageWithoutAShellIsUnsuitable() throws IOException {
    Path root = Sandboxes.tempDir("paddock-noshell-");
    String image = "paddock-test/no-shell:latest";
    try {
      Files.writeString(root.resolve("README"), "no shell here\n");
      Sandboxes.importImage(engine, root, image);
      assertThat(failureOf(SandboxSpec.builder(image).build())).isEqualTo(Kind.IMAGE_UNSUITABLE);
    } finally {
      engine.delete("/images/" + image + "?force=1");
      DockerTestEngine.deleteTree(root);
    }
  }

  @Test
  void anImageWithoutGlibcIsUnsuitableAndSaysSo() throws IOException {
    Path busybox = Path.of("/bin/busybox");
    org.junit.jupiter.api.Assumptions.assumeTrue(
        Files.isExecutable(busybox), "needs busybox-static (apt-get install busybox-static)");
    Path root = Sandboxes.tempDir("paddock-musl-like-");
    String image = "paddock-test/static-shell:latest";
    try {
      Files.createDirectories(root.resolve("bin"));
      Files.copy(busybox, root.resolve("bin/busybox"));
      for (String tool : List.of("sh", "grep", "cat")) {
        Files.createSymbolicLink(root.resolve("bin").resolve(tool), Path.of("busybox"));
      }
      Sandboxes.importImage(engine, root, image);
      assertThatThrownBy(() -> sandboxes.start("sb-static", SandboxSpec.builder(image).build()))
          .isInstanceOfSatisfying(
              RuntimeStartException.class,
              failure -> {
                assertThat(failure.failure().kind()).isEqualTo(Kind.IMAGE_UNSUITABLE);
                assertThat(failure.failure().rawDetail()).contains("no glibc");
              });
    } finally {
      engine.delete("/images/" + image + "?force=1");
      DockerTestEngine.deleteTree(root);
    }
  }

  @Test
  void anAgentThatExitsIsExitedWithItsCode() {
    assertThatThrownBy(
            () ->
                sandboxes.start(
                    "sb-exit",
                    SandboxSpec.builder(DockerTestEngine.IMAGE)
                        .command(List.of("--no-such-option"))
                        .build()))
        .isInstanceOfSatisfying(
            RuntimeStartException.class,
            failure -> {
              assertThat(failure.failure().kind()).isEqualTo(Kind.EXITED);
              assertThat(failure.failure().rawDetail())
                  .contains("stopped while starting (exit code 2)")
                  .contains("unknown option --no-such-option");
            });
  }

  @Test
  void tooLittleMemoryToStartIsOutOfMemory() {
    SandboxSpec tiny =
        SandboxSpec.builder(DockerTestEngine.IMAGE)
            .resources(
                new dev.paddock.api.Resources(
                    java.util.OptionalDouble.empty(),
                    java.util.OptionalLong.of(12L << 20),
                    java.util.OptionalInt.empty(),
                    java.util.OptionalLong.empty()))
            .build();
    assertThat(failureOf(tiny)).isEqualTo(Kind.OUT_OF_MEMORY);
  }

  @Test
  void anUnreachableEngineIsEngineUnreachable() {
    try (SandboxBackend nowhere =
        DockerTestEngine.backend(Map.of("docker.host", "unix:///nonexistent/docker.sock"))) {
      assertThatThrownBy(
              () ->
                  nowhere.start(
                      Sandboxes.request(
                          "sb-nowhere", spec(), Sandboxes.newKey(), Sandboxes.newKey())))
          .isInstanceOfSatisfying(
              RuntimeStartException.class,
              e -> assertThat(e.failure().kind()).isEqualTo(Kind.ENGINE_UNREACHABLE));
    }
  }

  @Test
  void theCallbackUrlIsCheckedFromInsideTheSandbox() throws IOException {
    int closedPort;
    try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closedPort = probe.getLocalPort();
    }
    try (SandboxBackend unreachable =
        DockerTestEngine.backend(
            Map.of("docker.callback-url", "http://127.0.0.1:" + closedPort + "/hooks"))) {
      assertThatThrownBy(
              () ->
                  unreachable.start(
                      Sandboxes.request(
                          "sb-callback", spec(), Sandboxes.newKey(), Sandboxes.newKey())))
          .isInstanceOfSatisfying(
              RuntimeStartException.class,
              e -> assertThat(e.failure().kind()).isEqualTo(Kind.CALLBACK_UNREACHABLE));
    }
    try (ServerSocket listening = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        SandboxBackend reachable =
            DockerTestEngine.backend(
                Map.of(
                    "docker.callback-url",
                    "http://127.0.0.1:" + listening.getLocalPort() + "/hooks"));
        Sandboxes mine = new Sandboxes(reachable)) {
      var sandbox = mine.start("sb-callback-ok", spec());
      assertThat(reachable.inspect(sandbox.handle()).status()).isEqualTo(SandboxStatus.RUNNING);
    }
  }

  @Test
  void listWithStateReportsEachSandboxAsInspectDoesWithItsHandle() {
    var running = sandboxes.start("sb-lws-running", spec());
    var paused = sandboxes.start("sb-lws-paused", spec());
    backend.pause(paused.handle());
    var killed = sandboxes.start("sb-lws-killed", spec());
    assertThat(engine.post("/containers/" + killed.container() + "/kill", null).status())
        .isEqualTo(204);
    Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> backend.inspect(killed.handle()).status() == SandboxStatus.ERROR);

    Map<String, dev.paddock.api.spi.ListedRuntime> listed = new java.util.HashMap<>();
    backend.listWithState().forEach(l -> listed.put(l.handle().sandboxId(), l));

    assertThat(listed.get("sb-lws-running").handle()).isEqualTo(running.handle());
    assertThat(listed.get("sb-lws-running").state().status()).isEqualTo(SandboxStatus.RUNNING);
    assertThat(listed.get("sb-lws-paused").state().status()).isEqualTo(SandboxStatus.PAUSED);
    assertThat(listed.get("sb-lws-killed").state().status()).isEqualTo(SandboxStatus.ERROR);
    assertThat(listed.get("sb-lws-killed").state().failure().orElseThrow().safeMessage())
        .contains("exit code 137, signal 9 (SIGKILL)");
    assertThat(listed.get("sb-lws-killed").handle().attributes())
        .containsEntry("volume", ContainerSpec.volumeName("sb-lws-killed"));
  }

  @Test
  void engineRefusalsAreClassified() {
    assertThat(ContainerStart.exitKind(121, false, List.of())).isEqualTo(Kind.IMAGE_UNSUITABLE);
    assertThat(ContainerStart.exitKind(124, false, List.of())).isEqualTo(Kind.CALLBACK_UNREACHABLE);
    assertThat(ContainerStart.exitKind(137, true, List.of())).isEqualTo(Kind.OUT_OF_MEMORY);
    assertThat(
            ContainerStart.exitKind(
                1, false, List.of("java.net.BindException: Address already in use")))
        .isEqualTo(Kind.PORT_TAKEN);
    assertThat(ContainerStart.exitKind(3, false, List.of("boom"))).isEqualTo(Kind.EXITED);
  }
}
