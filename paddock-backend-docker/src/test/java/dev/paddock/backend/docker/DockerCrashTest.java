package dev.paddock.backend.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.paddock.api.ArchiveStore;
import dev.paddock.api.Caller;
import dev.paddock.api.SandboxException;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.StartRequest;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.controlplane.ArchiveSettings;
import dev.paddock.controlplane.ArchiveStores;
import dev.paddock.controlplane.ConfiguredSpecService;
import dev.paddock.controlplane.ControlPlaneConfig;
import dev.paddock.controlplane.ControlPlaneSandboxService;
import dev.paddock.controlplane.ForwardedEnvironment;
import dev.paddock.store.SandboxStore;
import dev.paddock.store.SandboxStores;
import dev.paddock.store.TestDatabase;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.zip.GZIPInputStream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A sandbox's container killed ({@code docker kill}, SIGKILL) in each state, through the control
 * plane with required archiving: the status says what happened (exit code, signal), never "while
 * starting" for a sandbox that had run; resume restarts it on the same volume with a new key; a
 * delete archives the workspace of the stopped container first, and a required archive that cannot
 * be taken removes nothing.
 */
class DockerCrashTest {
  private static final Caller ALICE = Caller.user("alice");

  private DockerEngine engine;
  private Set<String> before;
  private TestDatabase database;
  private SandboxStore store;
  private SandboxBackend backend;
  private ArchiveStore archives;
  private ControlPlaneSandboxService service;
  private Path archiveDir;
  private Path bundleCopy;
  private ServerSocket stalled;
  private final List<Socket> queued = new java.util.ArrayList<>();

  @BeforeEach
  void setUp() throws IOException {
    engine = DockerTestEngine.require();
    before = DockerTestEngine.managedContainers(engine);
    database = TestDatabase.sqlite();
    store = SandboxStores.open(database.url(), database.user(), database.password());
    archiveDir = Files.createTempDirectory("paddock-docker-crash-archives-");
    archives = ArchiveStores.directory(archiveDir);
  }

  /** The service over a backend whose agent bundle is {@code bundle}. */
  private void serve(Path bundle) {
    serve(Map.of("docker.runtime-bundle", bundle.toString()));
  }

  private void serve(Map<String, String> settings) {
    backend = DockerTestEngine.backend(settings);
    SandboxSpec spec = SandboxSpec.builder(DockerTestEngine.IMAGE).workingDir("/workspace").build();
    service =
        ControlPlaneSandboxService.create(
            store,
            backend,
            ConfiguredSpecService.of(List.of(spec), ForwardedEnvironment.none()),
            ControlPlaneConfig.builder("docker-crash-test-master-secret-0123456789")
                .startTimeout(Duration.ofSeconds(60))
                .archives(
                    new ArchiveSettings(
                        true, true, ArchiveSettings.TAR_GZ, Duration.ofSeconds(60), "ws"))
                .archiveStore(archives)
                .build());
  }

  @AfterEach
  void tearDown() throws Exception {
    try {
      if (service != null) {
        service.close();
      }
      if (backend != null) {
        backend.list().forEach(backend::destroy);
        backend.close();
      }
      store.close();
      archives.close();
      database.close();
    } finally {
      DockerTestEngine.deleteTree(archiveDir);
      for (Socket socket : queued) {
        socket.close();
      }
      if (stalled != null) {
        stalled.close();
      }
      if (bundleCopy != null) {
        DockerTestEngine.deleteTree(bundleCopy);
      }
      DockerTestEngine.assertNoNewContainers(engine, before);
    }
  }

  @Test
  void aKilledRunningSandboxSaysHowItStoppedAndResumesOnItsFilesWithANewKey() {
    serve(DockerTestEngine.bundle());
    Running sandbox = startWithFile("sb-kill-running");

    kill(sandbox.id());

    SandboxInfo dead = awaitStatus(sandbox.id(), SandboxStatus.ERROR);
    assertThat(dead.statusDetail().orElseThrow())
        .contains("container stopped (exit code 137, signal 9 (SIGKILL))")
        .contains("workspace is kept")
        .doesNotContain("while starting");
    assertResumesWithItsFiles(sandbox);
  }

  /**
   * The kernel's OOM killer ending a sandbox's whole container. Under gVisor that is what going
   * past the memory limit does (the container's memory cgroup holds the Sentry, which holds all of
   * the sandbox's memory); under runc the killer ends the command only and the sandbox lives on
   * (DockerIsolationTest), so this test runs when the engine has runsc registered (CI does).
   */
  @Test
  void anOomKilledSandboxSaysSoKeepsItsVolumeAndResumesOnItsFilesWithANewKey() {
    String gvisor = gvisorRuntime();
    serve(
        Map.of(
            "docker.runtime-bundle",
            DockerTestEngine.bundle().toString(),
            "docker.runtime",
            gvisor,
            "docker.memory",
            "256m"));
    Running sandbox = startWithFile("sb-oom-killed");
    SandboxInfo running = service.get(ALICE, sandbox.id()).orElseThrow();
    try (Sandboxes agent = new Sandboxes(backend)) {
      // tail -c keeps the last 380 MiB it read in memory: past the 256 MiB limit. The answer
      // never comes (the agent dies with its sandbox), so the outcome is read from the status.
      agent.exec(
          running.agentServerUrl().orElseThrow(),
          sandbox.key(),
          "head -c 400m /dev/zero | tail -c 380m >/dev/null",
          60);
    } catch (RuntimeException | AssertionError dropped) {
      // expected: the connection ends with the container
    }

    SandboxInfo dead = awaitStatus(sandbox.id(), SandboxStatus.ERROR);
    assertThat(dead.statusDetail().orElseThrow())
        .contains("killed by the kernel for using too much memory")
        .contains("workspace is kept")
        .doesNotContain("while starting");
    assertThat(backend.inspect(handle(sandbox.id())).failure().orElseThrow().kind().id())
        .isEqualTo("docker.oom-killed");
    assertThat(engine.get("/volumes/" + ContainerSpec.volumeName(sandbox.id())).ok()).isTrue();
    assertResumesWithItsFiles(sandbox);
  }

  // A runtime registered with the engine that is gVisor with host networking (the tests' mode),
  // or the test is skipped saying why.
  private String gvisorRuntime() {
    EngineFeatures features = new EngineFeatures(engine);
    Optional<String> runtime =
        DockerTestEngine.runtime()
            .or(() -> Optional.of("runsc-hostnet"))
            .filter(name -> features.runtimes().contains(name))
            .filter(features::gvisor);
    assumeTrue(
        runtime.isPresent(),
        "no gVisor runtime runsc-hostnet registered with the engine (.ci/runsc.sh registers it)");
    return runtime.orElseThrow();
  }

  @Test
  void aKilledPausedSandboxSaysHowItStoppedAndResumesOnItsFilesWithANewKey() {
    serve(DockerTestEngine.bundle());
    Running sandbox = startWithFile("sb-kill-paused");
    assertThat(service.pause(ALICE, sandbox.id())).isTrue();

    kill(sandbox.id());

    Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(backend.inspect(handle(sandbox.id())).failure())
                    .hasValueSatisfying(
                        f -> assertThat(f.safeMessage()).contains("signal 9 (SIGKILL)")));
    assertResumesWithItsFiles(sandbox);
  }

  @Test
  void aSandboxKilledWhileStartingSaysSoWithTheSignalAndLeavesNothing() throws IOException {
    // The entry script's callback check connects to a loopback listener whose accept queue is
    // full: the connect hangs (SYNs dropped), so the container runs and its agent is not ready.
    stalled = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
    fillAcceptQueue(stalled.getLocalPort());
    serve(Map.of("docker.callback-url", "http://127.0.0.1:" + stalled.getLocalPort()));
    SandboxInfo started =
        service.start(ALICE, StartRequest.builder().sandboxId("sb-kill-start").build());
    Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> "running".equals(statusOf(started.id())));

    kill(started.id());

    SandboxInfo failed = awaitStatus(started.id(), SandboxStatus.ERROR);
    assertThat(failed.statusDetail().orElseThrow())
        .startsWith(dev.paddock.api.spi.RuntimeFailure.Kind.EXITED.safeMessage());
    Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> engine.get("/volumes/" + ContainerSpec.volumeName(started.id())).status() == 404);
    assertThat(
            engine
                .get("/containers/" + ContainerSpec.containerName(started.id()) + "/json")
                .status())
        .isEqualTo(404);
    assertThat(service.delete(ALICE, started.id())).isTrue();
  }

  @Test
  void deletingAStoppedSandboxArchivesItsWorkspaceFirst() throws IOException {
    serve(DockerTestEngine.bundle());
    Running sandbox = startWithFile("sb-kill-delete");
    // What a delete cut short by a control-plane crash leaves: the container stopped, not removed.
    engine.call(
        "POST",
        "/containers/" + ContainerSpec.containerName(sandbox.id()) + "/stop?t=1",
        new byte[0],
        null);
    SandboxInfo stopped = awaitStatus(sandbox.id(), SandboxStatus.ERROR);
    assertThat(stopped.statusDetail().orElseThrow()).contains("container stopped (exit code");

    assertThat(service.delete(ALICE, sandbox.id())).isTrue();

    String tarKey =
        archives.list("ws/" + sandbox.id() + "/").stream()
            .filter(k -> k.endsWith(".tar.gz"))
            .findFirst()
            .orElseThrow();
    assertThat(tarEntryText(tarKey, "notes.txt")).isEqualTo("kept across the crash\n");
    assertThat(engine.get("/volumes/" + ContainerSpec.volumeName(sandbox.id())).status())
        .isEqualTo(404);
  }

  @Test
  void aRequiredArchiveThatCannotBeTakenKeepsTheKilledSandboxAndItsFilesUntilItCanBe()
      throws IOException {
    bundleCopy = Files.createTempDirectory("paddock-docker-crash-bundle-");
    copyTree(DockerTestEngine.bundle(), bundleCopy);
    serve(bundleCopy);
    Running sandbox = startWithFile("sb-kill-required");
    kill(sandbox.id());
    awaitStatus(sandbox.id(), SandboxStatus.ERROR);
    // The agent cannot be started again (its bundle is gone), so the workspace cannot be sent.
    DockerTestEngine.deleteTree(bundleCopy);

    assertThatThrownBy(() -> service.delete(ALICE, sandbox.id()))
        .isInstanceOf(SandboxException.class)
        .hasMessageContaining("kept as it was");

    assertThat(service.get(ALICE, sandbox.id())).isPresent();
    assertThat(archives.list("ws/" + sandbox.id() + "/")).isEmpty();
    // The volume, read on the engine's host (a stopped container's archive endpoint cannot see
    // into its volumes): the files are still there.
    String mountpoint =
        String.valueOf(
            engine
                .get("/volumes/" + ContainerSpec.volumeName(sandbox.id()))
                .json()
                .get("Mountpoint"));
    assertThat(Path.of(mountpoint, "notes.txt")).hasContent("kept across the crash");

    // With its bundle back the delete goes through: the restart after the refused one gets a
    // fresh container, whose agent receives its secrets (a refused start closes the old one's
    // input for good: "secrets were to be given but none arrived").
    copyTree(DockerTestEngine.bundle(), bundleCopy);
    assertThat(service.delete(ALICE, sandbox.id())).isTrue();
    assertThat(archives.list("ws/" + sandbox.id() + "/")).isNotEmpty();
    assertThat(engine.get("/volumes/" + ContainerSpec.volumeName(sandbox.id())).status())
        .isEqualTo(404);
  }

  // ------------------------------------------------------------------ helpers

  private record Running(String id, String key) {}

  private Running startWithFile(String id) {
    SandboxInfo started = service.start(ALICE, StartRequest.builder().sandboxId(id).build());
    String key = started.sessionApiKey().orElseThrow();
    SandboxInfo running = service.waitUntilRunning(ALICE, id, Duration.ofSeconds(60));
    try (Sandboxes agent = new Sandboxes(backend)) {
      Map<String, Object> wrote =
          agent.exec(
              running.agentServerUrl().orElseThrow(),
              key,
              "printf 'kept across the crash\\n' > /workspace/notes.txt",
              30);
      assertThat(Sandboxes.exitCode(wrote)).as(wrote.toString()).isZero();
    }
    return new Running(id, key);
  }

  private void assertResumesWithItsFiles(Running sandbox) {
    SandboxInfo resumed = service.resume(ALICE, sandbox.id()).orElseThrow();
    String newKey = resumed.sessionApiKey().orElseThrow();
    assertThat(newKey).isNotEqualTo(sandbox.key());
    assertThat(resumed.status()).isEqualTo(SandboxStatus.RUNNING);
    String url = resumed.agentServerUrl().orElseThrow();
    try (Sandboxes agent = new Sandboxes(backend)) {
      assertThat(Sandboxes.stdout(agent.exec(url, newKey, "cat /workspace/notes.txt", 30)))
          .isEqualTo("kept across the crash\n");
      assertThatThrownBy(() -> agent.exec(url, sandbox.key(), "true", 10))
          .hasMessageContaining("401");
    }
  }

  private dev.paddock.api.spi.RuntimeHandle handle(String id) {
    return backend.list().stream().filter(h -> h.sandboxId().equals(id)).findFirst().orElseThrow();
  }

  private void kill(String id) {
    var killed = engine.post("/containers/" + ContainerSpec.containerName(id) + "/kill", null);
    assertThat(killed.status()).as(killed.message()).isEqualTo(204);
  }

  private String statusOf(String id) {
    var inspect = engine.get("/containers/" + ContainerSpec.containerName(id) + "/json");
    return inspect.ok() ? ContainerState.parse(inspect.json()).status() : "missing";
  }

  private SandboxInfo awaitStatus(String id, SandboxStatus status) {
    return Awaitility.await()
        .atMost(Duration.ofSeconds(60))
        .until(() -> service.get(ALICE, id).orElseThrow(), info -> info.status() == status);
  }

  /** The text of one file of a stored tar.gz (its entries sit under one top directory). */
  private String tarEntryText(String key, String name) throws IOException {
    try (InputStream in = new GZIPInputStream(archives.open(key).orElseThrow())) {
      byte[] header = new byte[512];
      while (in.readNBytes(header, 0, 512) == 512 && header[0] != 0) {
        String entry = new String(header, 0, 100, StandardCharsets.UTF_8).replace("\0", "");
        long size =
            Long.parseLong(new String(header, 124, 11, StandardCharsets.US_ASCII).trim(), 8);
        byte[] body = in.readNBytes((int) size);
        in.skipNBytes((512 - size % 512) % 512);
        if (entry.endsWith("/" + name) || entry.equals(name)) {
          return new String(body, StandardCharsets.UTF_8);
        }
      }
    }
    throw new AssertionError(name + " is not in " + key);
  }

  private void fillAcceptQueue(int port) {
    for (int i = 0; i < 4; i++) {
      Socket socket = new Socket();
      queued.add(socket);
      try {
        socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 300);
      } catch (IOException full) {
        return; // the queue is full: this connect's SYNs are dropped already
      }
    }
  }

  private static void copyTree(Path from, Path to) throws IOException {
    try (var paths = Files.walk(from)) {
      for (Path p : paths.toList()) {
        Path target = to.resolve(from.relativize(p).toString());
        if (Files.isDirectory(p)) {
          Files.createDirectories(target);
        } else {
          Files.copy(p, target, java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
        }
      }
    }
  }
}
