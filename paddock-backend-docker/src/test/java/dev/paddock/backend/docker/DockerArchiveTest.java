package dev.paddock.backend.docker;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.jr.ob.JSON;
import dev.paddock.api.ArchiveStore;
import dev.paddock.api.Caller;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxSpec;
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
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Archive before delete on the Docker backend: the control plane pulls the workspace from the agent
 * in the container (git-delta and tar.gz, read by the agent as root while commands wrote them as
 * the sandbox user), stores both with manifests, and only then removes the container. The tar.gz
 * extracts to the workspace and the patch applies with {@code git apply} on its base commit.
 */
class DockerArchiveTest {
  private static final Caller ALICE = Caller.user("alice");

  private DockerEngine engine;
  private Set<String> before;
  private TestDatabase database;
  private SandboxStore store;
  private SandboxBackend backend;
  private ArchiveStore archives;
  private ControlPlaneSandboxService service;
  private Path archiveDir;
  private Path scratch;

  @BeforeEach
  void setUp() throws IOException {
    engine = DockerTestEngine.require();
    before = DockerTestEngine.managedContainers(engine);
    database = TestDatabase.sqlite();
    store = SandboxStores.open(database.url(), database.user(), database.password());
    backend = DockerTestEngine.backend(Map.of());
    archiveDir = Files.createTempDirectory("paddock-docker-archives-");
    scratch = Files.createTempDirectory("paddock-docker-archive-check-");
    archives = ArchiveStores.directory(archiveDir);
    SandboxSpec spec = SandboxSpec.builder(DockerTestEngine.IMAGE).workingDir("/workspace").build();
    service =
        ControlPlaneSandboxService.create(
            store,
            backend,
            ConfiguredSpecService.of(List.of(spec), ForwardedEnvironment.none()),
            ControlPlaneConfig.builder("docker-archive-test-master-secret-0123456789")
                .startTimeout(Duration.ofSeconds(60))
                .archives(
                    new ArchiveSettings(
                        true, true, ArchiveSettings.BOTH, Duration.ofSeconds(120), "ws"))
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
      if (store != null) {
        store.close();
      }
      if (archives != null) {
        archives.close();
      }
      if (database != null) {
        database.close();
      }
    } finally {
      DockerTestEngine.deleteTree(archiveDir);
      DockerTestEngine.deleteTree(scratch);
      if (engine != null) {
        DockerTestEngine.assertNoNewContainers(engine, before);
      }
    }
  }

  @Test
  void deletingLeavesAnArchiveThatExtractsAndAPatchThatApplies() throws Exception {
    SandboxInfo started = service.start(ALICE, Optional.empty(), Optional.empty());
    String key = started.sessionApiKey().orElseThrow();
    SandboxInfo running = service.waitUntilRunning(ALICE, started.id(), Duration.ofSeconds(60));
    String url = running.agentServerUrl().orElseThrow();
    try (Sandboxes agent = new Sandboxes(backend)) {
      Map<String, Object> setup =
          agent.exec(
              url,
              key,
              "git init -q . && git config user.email a@example.com && git config user.name a"
                  + " && printf 'one\\n' > a.txt && git add a.txt && git commit -qm base"
                  + " && printf 'two\\n' >> a.txt && printf 'new\\n' > b.txt"
                  + " && head -c 300000 /dev/urandom > blob.bin && git rev-parse HEAD",
              30);
      assertThat(Sandboxes.exitCode(setup)).as(setup.toString()).isZero();
    }

    assertThat(service.delete(ALICE, started.id())).isTrue();

    List<String> keys = archives.list("ws/" + started.id() + "/");
    String tarKey = keys.stream().filter(k -> k.endsWith(".tar.gz")).findFirst().orElseThrow();
    String patchKey = keys.stream().filter(k -> k.endsWith(".patch")).findFirst().orElseThrow();
    assertThat(keys).contains(tarKey + ".manifest.json", patchKey + ".manifest.json");

    Path tarFile = copy(tarKey, scratch.resolve("ws.tar.gz"));
    Path extracted = Files.createDirectories(scratch.resolve("extracted"));
    run(scratch, "tar", "-xzf", tarFile.toString(), "-C", extracted.toString());
    // One top-level directory: the workspace.
    try (var top = Files.list(extracted)) {
      extracted = top.findFirst().orElseThrow();
    }
    assertThat(extracted.resolve(".git/HEAD")).exists();
    assertThat(extracted.resolve("a.txt")).hasContent("one\ntwo");
    assertThat(extracted.resolve("b.txt")).hasContent("new");
    assertThat(Files.size(extracted.resolve("blob.bin"))).isEqualTo(300000);

    Map<String, Object> manifest = manifest(patchKey);
    Path repo = Files.createDirectories(scratch.resolve("repo"));
    run(repo, "git", "init", "-q", ".");
    Files.writeString(repo.resolve("a.txt"), "one\n");
    run(repo, "git", "add", "a.txt");
    run(
        repo,
        "git",
        "-c",
        "user.email=a@example.com",
        "-c",
        "user.name=a",
        "commit",
        "-qm",
        "base");
    Path patch = copy(patchKey, scratch.resolve("ws.patch"));
    run(repo, "git", "apply", patch.toString());
    assertThat(repo.resolve("a.txt")).hasContent("one\ntwo");
    assertThat(repo.resolve("b.txt")).hasContent("new");
    assertThat(Files.mismatch(repo.resolve("blob.bin"), extracted.resolve("blob.bin")))
        .isEqualTo(-1);
    assertThat(manifest).containsKey("base_commit").containsEntry("format", "git-delta");
    assertThat(String.valueOf(manifest.get("environment"))).contains("Debian GNU/Linux 12");
    assertThat(DockerTestEngine.managedContainers(engine)).isEqualTo(before);
  }

  private Path copy(String key, Path target) throws IOException {
    try (InputStream in = archives.open(key).orElseThrow()) {
      Files.copy(in, target);
    }
    return target;
  }

  private Map<String, Object> manifest(String key) throws IOException {
    try (InputStream in = archives.open(key + ".manifest.json").orElseThrow()) {
      return JSON.std.mapFrom(new String(in.readAllBytes(), StandardCharsets.UTF_8));
    }
  }

  private static void run(Path dir, String... argv) throws IOException, InterruptedException {
    Process p = new ProcessBuilder(argv).directory(dir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(p.waitFor()).as(String.join(" ", argv) + ": " + out).isZero();
  }
}
