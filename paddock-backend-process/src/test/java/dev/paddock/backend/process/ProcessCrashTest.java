package dev.paddock.backend.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.jr.ob.JSON;
import dev.paddock.api.ArchiveStore;
import dev.paddock.api.Caller;
import dev.paddock.api.Resources;
import dev.paddock.api.SandboxException;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxStartException;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.StartRequest;
import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeHandle;
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
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.zip.GZIPInputStream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A sandbox's agent killed with SIGKILL (or by the OOM killer) in each state, through the control
 * plane with required archiving: the status says what happened (exit code, signal, OOM), never
 * "while starting" for an agent that had served; resume starts it again on the same directory with
 * a new key; a delete archives the dead agent's workspace first, and a required archive that cannot
 * be taken removes nothing.
 */
class ProcessCrashTest {
  private static final Caller ALICE = Caller.user("alice");
  private static final String NOTE = "kept across the crash\n";

  @RegisterExtension final SandboxFixture fixture = new SandboxFixture();

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private TestDatabase database;
  private SandboxStore store;
  private SandboxBackend backend;
  private ArchiveStore archives;
  private Path archiveDir;
  private ControlPlaneSandboxService service;

  @BeforeEach
  void setUp() throws IOException {
    database = TestDatabase.sqlite();
    store = SandboxStores.open(database.url(), database.user(), database.password());
    archiveDir = Files.createTempDirectory("paddock-process-crash-archives-");
    archives = ArchiveStores.directory(archiveDir);
    backend = fixture.backend();
    List<SandboxSpec> specs =
        List.of(
            SandboxSpec.builder("process-default").build(),
            SandboxSpec.builder("memory-limited")
                .resources(
                    new Resources(
                        java.util.OptionalDouble.empty(),
                        java.util.OptionalLong.of(384L << 20),
                        java.util.OptionalInt.empty(),
                        java.util.OptionalLong.empty()))
                .build(),
            SandboxSpec.builder("never-ready")
                .command(List.of("bash", "-c", "exec sleep 120", "never-ready"))
                .build(),
            SandboxSpec.builder("starts-once")
                .command(
                    List.of(
                        "bash",
                        "-c",
                        "if [ -e started-once ]; then exit 7; fi; : > started-once; exec \"$@\"",
                        "starts-once"))
                .build());
    service =
        ControlPlaneSandboxService.create(
            store,
            backend,
            ConfiguredSpecService.of(withAgent(specs), ForwardedEnvironment.none()),
            ControlPlaneConfig.builder("process-crash-test-master-secret-0123456789")
                .startTimeout(Duration.ofSeconds(60))
                .archives(
                    new ArchiveSettings(
                        true, true, ArchiveSettings.TAR_GZ, Duration.ofSeconds(60), "ws"))
                .archiveStore(archives)
                .build());
  }

  /** The "starts-once" wrapper runs the agent command it is given after its script. */
  private static List<SandboxSpec> withAgent(List<SandboxSpec> specs) {
    List<String> agent = CommandLine.split(ProcessBackendProvider.classPathAgentCommand());
    List<SandboxSpec> out = new ArrayList<>();
    for (SandboxSpec spec : specs) {
      if (spec.id().equals("starts-once")) {
        List<String> command = new ArrayList<>(spec.command());
        command.addAll(agent);
        out.add(SandboxSpec.builder(spec.id()).command(command).build());
      } else {
        out.add(spec);
      }
    }
    return out;
  }

  @AfterEach
  void tearDown() throws Exception {
    try {
      service.close();
      backend.list().forEach(backend::destroy);
      store.close();
      archives.close();
      database.close();
    } finally {
      try (var paths = Files.walk(archiveDir)) {
        for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      }
    }
  }

  @Test
  void aKilledRunningSandboxSaysHowItStoppedAndResumesOnItsFilesWithANewKey() throws Exception {
    Running sandbox = startWithFile("process-default");

    kill(agentPid(sandbox.id()));

    SandboxInfo dead = awaitStatus(sandbox.id(), SandboxStatus.ERROR);
    assertThat(dead.statusDetail().orElseThrow())
        .contains("exited with code 137 (SIGKILL)")
        .contains("workspace is kept")
        .doesNotContain("while starting");
    assertThat(fixture.sandboxDir(sandbox.id()).resolve("workspace/notes.txt")).hasContent(NOTE);
    assertResumesWithItsFiles(sandbox);
  }

  @Test
  void aKilledPausedSandboxResumesOnItsFilesWithANewKey() throws Exception {
    Running sandbox = startWithFile("process-default");
    long pid = agentPid(sandbox.id());
    assertThat(service.pause(ALICE, sandbox.id())).isTrue();

    // A frozen agent takes the SIGKILL when it is thawed, that is during the resume.
    kill(pid);

    SandboxInfo resumed = assertResumesWithItsFiles(sandbox);
    assertThat(agentPid(resumed.id())).isNotEqualTo(pid);
  }

  @Test
  void anAgentKilledWhileARestartRunsFailsThatResumeAndTheNextOneBringsItBack() throws Exception {
    Running sandbox = startWithFile("process-default");
    long first = agentPid(sandbox.id());
    kill(first);
    awaitStatus(sandbox.id(), SandboxStatus.ERROR);

    CompletableFuture<Optional<SandboxInfo>> resume =
        CompletableFuture.supplyAsync(() -> service.resume(ALICE, sandbox.id()));
    long restarted =
        Awaitility.await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> labelled(sandbox.id()), pids -> !pids.isEmpty() && !pids.contains(first))
            .get(0);
    kill(restarted);

    assertThatThrownBy(resume::join).hasCauseInstanceOf(SandboxStartException.class);
    SandboxInfo failed = service.get(ALICE, sandbox.id()).orElseThrow();
    assertThat(failed.status()).isEqualTo(SandboxStatus.ERROR);
    assertThat(failed.statusDetail().orElseThrow()).isNotEmpty();
    assertThat(fixture.sandboxDir(sandbox.id()).resolve("workspace/notes.txt")).hasContent(NOTE);
    assertResumesWithItsFiles(sandbox);
  }

  @Test
  void anAgentTheOomKillerTookIsReportedSoAndResumes() throws Exception {
    Running sandbox = startWithFile("memory-limited");
    long pid = agentPid(sandbox.id());
    // The agent gives its commands the highest OOM score; give it the same, so the largest
    // process of the cgroup goes first: the agent's JVM, next to small commands.
    Files.writeString(Path.of("/proc/" + pid + "/oom_score_adj"), "1000");
    // Inspected alive once more (reconcile does this every few seconds).
    assertThat(service.get(ALICE, sandbox.id()).orElseThrow().status())
        .isEqualTo(SandboxStatus.RUNNING);

    // 14 processes of 30 MiB each: together past the 384 MiB limit, each smaller than the agent.
    startCommand(
        sandbox,
        "for i in $(seq 14); do /usr/bin/python3 -c 'import time; b = b\"x\" * (30 << 20);"
            + " time.sleep(120)' & done; wait");

    SandboxInfo dead = awaitStatus(sandbox.id(), SandboxStatus.ERROR);
    assertThat(dead.statusDetail().orElseThrow())
        .contains("killed for using too much memory")
        .contains("SIGKILL")
        .contains("workspace is kept");
    assertResumesWithItsFiles(sandbox);
  }

  @Test
  void aSandboxKilledWhileStartingSaysSoWithTheSignalAndLeavesNothing() {
    SandboxInfo started =
        service.start(
            ALICE, StartRequest.builder().sandboxId(fixture.newId()).specId("never-ready").build());
    long pid =
        Awaitility.await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> labelled(started.id()), pids -> !pids.isEmpty())
            .get(0);

    kill(pid);

    SandboxInfo failed = awaitStatus(started.id(), SandboxStatus.ERROR);
    assertThat(failed.statusDetail().orElseThrow())
        .startsWith(RuntimeFailure.Kind.EXITED.safeMessage());
    assertThat(fixture.sandboxDir(started.id())).doesNotExist();
    assertThat(backend.list()).extracting(RuntimeHandle::sandboxId).doesNotContain(started.id());
    assertThat(service.delete(ALICE, started.id())).isTrue();
  }

  @Test
  void deletingAKilledSandboxArchivesItsWorkspaceFirst() throws Exception {
    Running sandbox = startWithFile("process-default");
    kill(agentPid(sandbox.id()));
    awaitStatus(sandbox.id(), SandboxStatus.ERROR);

    assertThat(service.delete(ALICE, sandbox.id())).isTrue();

    String tarKey =
        archives.list("ws/" + sandbox.id() + "/").stream()
            .filter(k -> k.endsWith(".tar.gz"))
            .findFirst()
            .orElseThrow();
    assertThat(tarEntryText(tarKey, "notes.txt")).isEqualTo(NOTE);
    assertThat(fixture.sandboxDir(sandbox.id())).doesNotExist();
    assertThat(labelled(sandbox.id())).isEmpty();
  }

  @Test
  void aRequiredArchiveThatCannotBeTakenKeepsTheKilledSandboxAndItsFiles() throws Exception {
    // Its agent starts once: after the kill it cannot be brought back to send the workspace.
    Running sandbox = startWithFile("starts-once");
    kill(agentPid(sandbox.id()));
    awaitStatus(sandbox.id(), SandboxStatus.ERROR);

    assertThatThrownBy(() -> service.delete(ALICE, sandbox.id()))
        .isInstanceOf(SandboxException.class)
        .hasMessageContaining("kept as it was");

    assertThat(service.get(ALICE, sandbox.id())).isPresent();
    assertThat(archives.list("ws/" + sandbox.id() + "/")).isEmpty();
    assertThat(fixture.sandboxDir(sandbox.id()).resolve("workspace/notes.txt")).hasContent(NOTE);
  }

  // ------------------------------------------------------------------ helpers

  private record Running(String id, String key) {}

  private Running startWithFile(String specId) throws Exception {
    String id = fixture.newId();
    SandboxInfo started =
        service.start(ALICE, StartRequest.builder().sandboxId(id).specId(specId).build());
    String key = started.sessionApiKey().orElseThrow();
    SandboxInfo running = service.waitUntilRunning(ALICE, id, Duration.ofSeconds(60));
    HttpResponse<String> wrote =
        exec(
            running.agentServerUrl().orElseThrow(),
            key,
            "printf 'kept across the crash\\n' > notes.txt");
    assertThat(wrote.statusCode()).as(wrote.body()).isEqualTo(200);
    assertThat(JSON.std.mapFrom(wrote.body()).get("exit_code")).isEqualTo(0);
    return new Running(id, key);
  }

  private SandboxInfo assertResumesWithItsFiles(Running sandbox) throws Exception {
    SandboxInfo resumed = service.resume(ALICE, sandbox.id()).orElseThrow();
    String newKey = resumed.sessionApiKey().orElseThrow();
    assertThat(newKey).isNotEqualTo(sandbox.key());
    assertThat(resumed.status()).isEqualTo(SandboxStatus.RUNNING);
    String url = resumed.agentServerUrl().orElseThrow();
    HttpResponse<String> read = exec(url, newKey, "cat notes.txt");
    assertThat(read.statusCode()).as(read.body()).isEqualTo(200);
    assertThat(JSON.std.mapFrom(read.body()).get("stdout")).isEqualTo(NOTE);
    assertThat(exec(url, sandbox.key(), "true").statusCode()).isEqualTo(401);
    return resumed;
  }

  private HttpResponse<String> exec(String url, String key, String command)
      throws IOException, InterruptedException {
    return post(url, key, "/api/bash/execute_bash_command", command, 30);
  }

  private void startCommand(Running sandbox, String command) throws Exception {
    String url = service.get(ALICE, sandbox.id()).orElseThrow().agentServerUrl().orElseThrow();
    HttpResponse<String> started =
        post(url, sandbox.key(), "/api/bash/start_bash_command", command, 120);
    assertThat(started.statusCode()).as(started.body()).isEqualTo(200);
  }

  private HttpResponse<String> post(
      String url, String key, String path, String command, int timeoutSeconds)
      throws IOException, InterruptedException {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("command", command);
    body.put("timeout", timeoutSeconds);
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(url + path))
            .timeout(Duration.ofSeconds(timeoutSeconds + 30L))
            .header("X-Session-API-Key", key)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(JSON.std.asString(body)))
            .build();
    return http.send(request, HttpResponse.BodyHandlers.ofString());
  }

  private long agentPid(String id) {
    return backend.list().stream()
        .filter(h -> h.sandboxId().equals(id))
        .map(SandboxFixture::pid)
        .findFirst()
        .orElseThrow();
  }

  /** The sandbox's labelled processes: its agent first (the oldest). */
  private static List<Long> labelled(String id) {
    return ProcFs.system().labelled(id).stream().sorted().toList();
  }

  private static void kill(long pid) {
    assertThat(ProcessHandle.of(pid).map(ProcessHandle::destroyForcibly)).contains(true);
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
}
