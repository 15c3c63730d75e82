package dev.paddock.backend.ssh;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.SandboxBackend;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The SSH backend against a real sshd on loopback: what only this backend does. */
class SshBackendTest {
  private static TestSshd sshd;

  private final Agents agents = new Agents();
  private SshBackend backend;

  @BeforeAll
  static void startSshd() {
    sshd = TestSshd.start();
  }

  @AfterAll
  static void stopSshd() {
    if (sshd != null) {
      sshd.close();
    }
  }

  @AfterEach
  void destroyEverything() throws Exception {
    if (backend != null) {
      backend.list().forEach(backend::destroy);
      backend.close();
    }
    agents.close();
    Path sandboxes = sshd.remoteDir().resolve("sandboxes");
    if (Files.isDirectory(sandboxes)) {
      try (var left = Files.list(sandboxes)) {
        assertThat(left).as("sandbox directories left on the host").isEmpty();
      }
    }
  }

  private SshBackend backend(Map<String, String> overrides) {
    backend = SshBackend.create(SshSettings.from(sshd.settings(overrides)));
    return backend;
  }

  @Test
  void startRunsTheAgentOnTheHostReachedOnlyThroughTheForward() {
    SandboxBackend ssh = backend(Map.of());
    Agents.Sandbox sandbox = Agents.start(ssh, "sb-forward");
    String url = Agents.url(ssh, sandbox.handle());
    int agentPort = Integer.parseInt(sandbox.handle().attributes().get("port"));

    assertThat(url).startsWith("http://127.0.0.1:").doesNotEndWith(":" + agentPort);
    assertThat(Agents.stdout(agents.exec(url, sandbox.key(), "echo $HOME")))
        .contains(sshd.remoteDir().resolve("sandboxes/sb-forward/workspace").toString());
  }

  @Test
  void pauseFreezesTheSandboxAndResumeThawsIt() {
    SandboxBackend ssh = backend(Map.of());
    Agents.Sandbox sandbox = Agents.start(ssh, "sb-pause");
    ssh.pause(sandbox.handle());
    assertThat(ssh.inspect(sandbox.handle()).status()).isEqualTo(SandboxStatus.PAUSED);
    ssh.resume(sandbox.handle());
    String url = Agents.url(ssh, sandbox.handle());
    assertThat(Agents.stdout(agents.exec(url, sandbox.key(), "echo back"))).contains("back");
  }
}
