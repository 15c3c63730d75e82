package dev.paddock.backend.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.paddock.api.SandboxSpec;
import dev.paddock.api.spi.RuntimeFailure.Kind;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeStartException;
import dev.paddock.api.spi.SandboxBackend;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Each failure is classified, and nothing of the half-started sandbox is left behind. */
class StartFailureTest {
  @RegisterExtension final SandboxFixture fixture = new SandboxFixture();

  private RuntimeStartException startFails(Map<String, String> settings, String id) {
    SandboxBackend backend = fixture.backend(settings);
    RuntimeStartException failure =
        catchThrowableOfType(RuntimeStartException.class, () -> backend.start(fixture.request(id)));
    assertThat(failure).as("start of " + id).isNotNull();
    assertThat(fixture.sandboxDir(id)).doesNotExist();
    assertThat(ProcFs.system().labelled(id)).isEmpty();
    assertThat(backend.list()).isEmpty();
    return failure;
  }

  @Test
  void specWhoseImageBringsItsOwnAgentServerIsRefusedWithoutStartingAnything() {
    SandboxBackend backend = fixture.backend(Map.of());
    String id = fixture.newId();
    SandboxSpec imageAgent =
        SandboxSpec.builder("openhands").agentServer(SandboxSpec.AgentServer.IMAGE).build();

    RuntimeStartException failure =
        catchThrowableOfType(
            RuntimeStartException.class, () -> backend.start(fixture.request(id, imageAgent)));

    assertThat(failure.failure().kind()).isEqualTo(ProcessBackend.FOREIGN_AGENT);
    assertThat(failure.failure().safeMessage()).contains("Docker");
    assertThat(failure.failure().rawDetail()).contains("openhands").contains("agent_server: image");
    assertThat(fixture.sandboxDir(id)).doesNotExist();
    assertThat(ProcFs.system().labelled(id)).isEmpty();
    assertThat(backend.list()).isEmpty();
  }

  @Test
  void missingAgentBinaryIsBinaryMissing() {
    RuntimeStartException failure =
        startFails(
            Map.of("agent.command", "/nonexistent/bin/java -jar agent.jar"), fixture.newId());

    assertThat(failure.failure().kind()).isEqualTo(Kind.BINARY_MISSING);
    assertThat(failure.failure().rawDetail()).contains("/nonexistent/bin/java");
  }

  @Test
  void unbuiltAgentJarIsBinaryMissing() throws Exception {
    Path emptyHome = Files.createDirectory(fixture.dataDir().resolve("empty-home"));
    Map<String, String> settings =
        new java.util.HashMap<>(fixture.settings(Map.of("paddock.home", emptyHome.toString())));
    settings.remove("agent.command");
    SandboxBackend backend = new ProcessBackendProvider().create(settings);
    String id = fixture.newId();

    RuntimeStartException failure =
        catchThrowableOfType(RuntimeStartException.class, () -> backend.start(fixture.request(id)));

    assertThat(failure.failure().kind()).isEqualTo(Kind.BINARY_MISSING);
    assertThat(failure.failure().rawDetail()).contains("paddock-agent-server-all.jar");
    assertThat(fixture.sandboxDir(id)).doesNotExist();
  }

  @Test
  void agentExitingBeforeReadyIsExitedWithCodeAndOutput() {
    RuntimeStartException failure =
        startFails(
            Map.of("agent.command", "bash -c 'echo something broke >&2; exit 3'"), fixture.newId());

    assertThat(failure.failure().kind()).isEqualTo(Kind.EXITED);
    assertThat(failure.failure().rawDetail())
        .contains("exited with code 3")
        .contains("something broke");
  }

  @Test
  void agentThatNeverPrintsItsReadyLineIsNeverReady() {
    RuntimeStartException failure =
        startFails(
            Map.of("agent.command", "bash -c 'sleep 1000; :'", "process.ready-timeout", "1s"),
            fixture.newId());

    assertThat(failure.failure().kind()).isEqualTo(Kind.NEVER_READY);
    assertThat(failure.failure().rawDetail()).contains("1000 ms");
  }

  @Test
  void agentThatCannotBindIsPortTaken() throws Exception {
    try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getByName("127.0.0.1"))) {
      // A real agent whose last --port wins over the backend's "--port 0".
      String command =
          "bash -c 'exec "
              + ProcessBackendProvider.classPathAgentCommand().replace("'", "")
              + " \"$@\" --port "
              + taken.getLocalPort()
              + "' agent";

      RuntimeStartException failure = startFails(Map.of("agent.command", command), fixture.newId());

      assertThat(failure.failure().kind()).isEqualTo(Kind.PORT_TAKEN);
    }
  }

  @Test
  void specCommandTakesPrecedenceOverTheAgentCommandSetting() {
    SandboxBackend backend = fixture.backend();
    String id = fixture.newId();
    SandboxSpec spec =
        SandboxSpec.builder("custom").command(List.of("bash", "-c", "exit 4")).build();

    RuntimeStartException failure =
        catchThrowableOfType(
            RuntimeStartException.class, () -> backend.start(fixture.request(id, spec)));

    assertThat(failure.failure().kind()).isEqualTo(Kind.EXITED);
    assertThat(failure.failure().rawDetail()).contains("exited with code 4");
    assertThat(fixture.sandboxDir(id)).doesNotExist();
  }

  @Test
  void sandboxIdInUseIsRefusedWithoutTouchingTheLiveSandbox() {
    SandboxBackend backend = fixture.backend();
    String id = fixture.newId();
    RuntimeHandle live = backend.start(fixture.request(id));

    RuntimeStartException failure =
        catchThrowableOfType(RuntimeStartException.class, () -> backend.start(fixture.request(id)));

    assertThat(failure.failure().kind()).isEqualTo(Kind.UNKNOWN);
    assertThat(fixture.sandboxDir(id).resolve("paddock.json")).exists();
    assertThat(backend.list()).containsExactly(live);
  }
}
