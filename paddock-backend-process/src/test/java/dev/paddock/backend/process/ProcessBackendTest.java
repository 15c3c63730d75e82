package dev.paddock.backend.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.awaitility.Awaitility.await;

import dev.paddock.api.ExposedUrl;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeState;
import dev.paddock.api.spi.SandboxBackend;
import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

class ProcessBackendTest {
  @RegisterExtension final SandboxFixture fixture = new SandboxFixture();

  @Test
  void startedSandboxIsRunningWithItsAgentUrl() throws Exception {
    SandboxBackend backend = fixture.backend();
    String id = fixture.newId();
    RuntimeHandle handle = backend.start(fixture.request(id));

    RuntimeState state = backend.inspect(handle);

    int port = SandboxFixture.port(handle);
    assertThat(handle.backend()).isEqualTo("process");
    assertThat(state.status()).isEqualTo(SandboxStatus.RUNNING);
    assertThat(state.urls())
        .containsExactly(new ExposedUrl(ExposedUrl.AGENT_SERVER, "http://127.0.0.1:" + port, port));
    assertThat(fixture.get(handle, "/alive", Optional.empty()).statusCode()).isEqualTo(200);
    assertThat(fixture.sandboxDir(id).resolve("workspace")).isDirectory();
    assertThat(Files.readString(fixture.sandboxDir(id).resolve("paddock.json")))
        .contains("\"managed\":true", "\"sandbox_id\":\"" + id + "\"", "\"port\":\"" + port + "\"");
  }

  @Test
  void agentAcceptsOnlyTheKeyWhoseDigestItWasGiven() throws Exception {
    SandboxBackend backend = fixture.backend();
    RuntimeHandle handle = backend.start(fixture.request(fixture.newId()));
    String route = "/api/bash/bash_events/search";

    assertThat(fixture.get(handle, route, Optional.of(SandboxFixture.KEY)).statusCode())
        .isEqualTo(200);
    assertThat(fixture.get(handle, route, Optional.of("wrong-key")).statusCode()).isEqualTo(401);
    assertThat(fixture.get(handle, route, Optional.empty()).statusCode()).isEqualTo(401);
  }

  @Test
  void confineFilesKeepsTheAgentsFileRoutesInsideTheWorkspace() throws Exception {
    String id = fixture.newId();
    RuntimeHandle confined =
        fixture.backend(Map.of("process.confine-files", "true")).start(fixture.request(id));
    RuntimeHandle open = fixture.backend().start(fixture.request(fixture.newId()));
    Path inside = fixture.sandboxDir(id).resolve("workspace").resolve("in.txt");
    Files.writeString(inside, "in");
    Optional<String> key = Optional.of(SandboxFixture.KEY);

    assertThat(fixture.get(confined, download(inside.toString()), key).body()).isEqualTo("in");
    for (String outside :
        List.of(
            "/etc/passwd", inside.getParent() + "/../agent.launch.json", "/proc/self/environ")) {
      assertThat(fixture.get(confined, download(outside), key).statusCode())
          .as("download of %s", outside)
          .isEqualTo(403);
    }
    assertThat(fixture.get(open, download("/etc/passwd"), key).statusCode())
        .as("the default: the whole host as the agent's user sees it")
        .isEqualTo(200);
  }

  private static String download(String path) {
    return "/api/file/download?path=" + URLEncoder.encode(path, StandardCharsets.UTF_8);
  }

  @Test
  void agentEnvironmentIsBuiltFromScratchAndLabelled() throws Exception {
    SandboxBackend backend = fixture.backend();
    String id = fixture.newId();
    RuntimeHandle handle = backend.start(fixture.request(id));

    Map<String, String> env = environ(SandboxFixture.pid(handle));

    assertThat(env.keySet())
        .containsExactlyInAnyOrder(
            "PATH", "HOME", "LANG", "SANDBOX_VAR", "PADDOCK_SANDBOX_ID", "PADDOCK_MANAGED");
    assertThat(env)
        .containsEntry("HOME", fixture.sandboxDir(id).resolve("workspace").toString())
        .containsEntry("PADDOCK_SANDBOX_ID", id)
        .containsEntry("PADDOCK_MANAGED", "true")
        .containsEntry("SANDBOX_VAR", "from-request");
  }

  @ParameterizedTest
  @EnumSource(Freezing.class)
  void pauseFreezesCommandsAndResumeThawsThem(Freezing freezing) throws Exception {
    freezing.assumeAvailable();
    SandboxBackend backend = fixture.backend(freezing.settings());
    String id = fixture.newId();
    RuntimeHandle handle = backend.start(fixture.request(id));
    assertThat(handle.attributes()).containsEntry("freezer", freezing.setting);
    Path counter = fixture.sandboxDir(id).resolve("workspace/counter");
    fixture.startCommand(handle, "while :; do echo tick >> " + counter + "; sleep 0.02; done");
    await().atMost(Duration.ofSeconds(20)).until(() -> size(counter) > 0);

    backend.pause(handle);
    backend.pause(handle); // idempotent

    assertThat(backend.inspect(handle).status()).isEqualTo(SandboxStatus.PAUSED);
    long frozenAt = size(counter);
    await()
        .during(Duration.ofMillis(600))
        .atMost(Duration.ofSeconds(2))
        .until(() -> size(counter) == frozenAt);

    assertThat(backend.resume(handle)).isEqualTo(handle);

    assertThat(backend.inspect(handle).status()).isEqualTo(SandboxStatus.RUNNING);
    await().atMost(Duration.ofSeconds(10)).until(() -> size(counter) > frozenAt);
  }

  @ParameterizedTest
  @EnumSource(Freezing.class)
  void destroyOfAPausedSandboxKillsEveryProcessAndRemovesItsCgroupAndDirectory(Freezing freezing)
      throws Exception {
    freezing.assumeAvailable();
    SandboxBackend backend = fixture.backend(freezing.settings());
    String id = fixture.newId();
    RuntimeHandle handle = backend.start(fixture.request(id));
    fixture.startCommand(handle, "sleep 1000");
    long sleeper =
        await()
            .atMost(Duration.ofSeconds(20))
            .until(() -> sleepPid(id), Optional::isPresent)
            .orElseThrow();
    Optional<String> cgroup = Optional.ofNullable(handle.attributes().get("cgroup"));
    backend.pause(handle);

    backend.destroy(handle);

    ProcFs procFs = ProcFs.system();
    assertThat(procFs.stat(sleeper).filter(ProcStat::alive)).as("sleep 1000").isEmpty();
    assertThat(procFs.stat(SandboxFixture.pid(handle)).filter(ProcStat::alive))
        .as("agent")
        .isEmpty();
    assertThat(procFs.labelled(id)).isEmpty();
    assertThat(fixture.sandboxDir(id)).doesNotExist();
    cgroup.ifPresent(dir -> assertThat(Path.of(dir)).doesNotExist());
    assertThat(backend.inspect(handle)).isEqualTo(RuntimeState.missing());
    assertThatCode(() -> backend.destroy(handle)).doesNotThrowAnyException();
  }

  @Test
  void destroyOfARunningSandboxStopsItsAgentGracefully() throws Exception {
    SandboxBackend backend = fixture.backend();
    String id = fixture.newId();
    RuntimeHandle handle = backend.start(fixture.request(id));

    backend.destroy(handle);
    backend.destroy(handle);

    assertThat(ProcFs.system().labelled(id)).isEmpty();
    assertThat(fixture.sandboxDir(id)).doesNotExist();
    assertThat(backend.list()).isEmpty();
  }

  @Test
  void agentThatDiesWhileRunningIsReportedAsStoppedWithItsExitCodeAndSignal() throws Exception {
    SandboxBackend backend = fixture.backend();
    RuntimeHandle handle = backend.start(fixture.request(fixture.newId()));
    ProcessHandle.of(SandboxFixture.pid(handle)).orElseThrow().destroyForcibly();

    RuntimeState state =
        await()
            .atMost(Duration.ofSeconds(10))
            .until(() -> backend.inspect(handle), s -> s.status() == SandboxStatus.ERROR);

    assertThat(state.failure())
        .get()
        .extracting(RuntimeFailure::kind)
        .isEqualTo(RuntimeFailure.Kind.STOPPED);
    assertThat(state.failure().orElseThrow().rawDetail()).contains("exited with code 137");
    assertThat(state.failure().orElseThrow().safeMessage())
        .isEqualTo(
            "The sandbox's agent stopped while it was running: it exited with code 137 (SIGKILL);"
                + " its workspace is kept: resume the sandbox to restart it.");
    // Its directory, and the workspace in it, are kept: it is still a runtime of this backend.
    assertThat(backend.list()).extracting(RuntimeHandle::sandboxId).contains(handle.sandboxId());
    backend.destroy(handle);
  }

  private static long size(Path file) throws IOException {
    return Files.exists(file) ? Files.size(file) : 0;
  }

  private static Map<String, String> environ(long pid) throws IOException {
    String raw = Files.readString(Path.of("/proc/" + pid + "/environ"), StandardCharsets.UTF_8);
    return Arrays.stream(raw.split("\0"))
        .filter(entry -> entry.contains("="))
        .collect(
            java.util.stream.Collectors.toMap(
                e -> e.substring(0, e.indexOf('=')), e -> e.substring(e.indexOf('=') + 1)));
  }

  /** The pid of the sandbox's {@code sleep 1000}, found by label and command line. */
  private static Optional<Long> sleepPid(String id) {
    for (long pid : ProcFs.system().labelled(id)) {
      try {
        String cmdline =
            Files.readString(Path.of("/proc/" + pid + "/cmdline"), StandardCharsets.UTF_8);
        if (cmdline.equals("sleep\u00001000\u0000")) {
          return Optional.of(pid);
        }
      } catch (IOException e) {
        // exited meanwhile
      }
    }
    return Optional.empty();
  }
}
