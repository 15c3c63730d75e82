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
    sshd = TestSshd.startWithEmptyHost(); // its bundle test watches the first copy
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

  @Test
  void aRestartedControlPlaneAdoptsTheSandboxFromTheHostsMarkers() {
    SshBackend first = SshBackend.create(SshSettings.from(sshd.settings(Map.of())));
    Agents.Sandbox sandbox = Agents.start(first, "sb-adopted");
    String before = Agents.url(first, sandbox.handle());
    first.close(); // the master and its forwards die with the old control plane

    SandboxBackend restarted = backend(Map.of());
    var listed = restarted.listWithState();
    assertThat(listed).extracting(l -> l.handle().sandboxId()).containsExactly("sb-adopted");
    assertThat(listed.get(0).state().status()).isEqualTo(SandboxStatus.RUNNING);
    String after = Agents.url(restarted, listed.get(0).handle());
    assertThat(after).isNotEqualTo(before);
    assertThat(Agents.stdout(agents.exec(after, sandbox.key(), "echo still here")))
        .contains("still here");
  }

  @Test
  void theRuntimeBundleIsCopiedToAHostOnceForAllItsSandboxes() throws Exception {
    SandboxBackend ssh = backend(Map.of());
    Agents.start(ssh, "sb-one");
    Path bundles = sshd.remoteDir().resolve("bundles");
    Path complete;
    try (var dirs = Files.list(bundles)) {
      complete = dirs.toList().stream().map(d -> d.resolve(".complete")).findFirst().orElseThrow();
    }
    var copiedAt = Files.getLastModifiedTime(complete);
    backend.close();
    SandboxBackend again = backend(Map.of());
    Agents.start(again, "sb-two");
    try (var dirs = Files.list(bundles)) {
      assertThat(dirs).hasSize(1);
    }
    assertThat(Files.getLastModifiedTime(complete)).isEqualTo(copiedAt);
  }

  @Test
  void deleteKillsEveryProcessOfTheSandboxAndRemovesItsDirectory() {
    SandboxBackend ssh = backend(Map.of());
    Agents.Sandbox sandbox = Agents.start(ssh, "sb-delete");
    String url = Agents.url(ssh, sandbox.handle());
    agents.exec(url, sandbox.key(), "(setsid sleep 600 >/dev/null 2>&1 &) ; echo started");
    Path dir = sshd.remoteDir().resolve("sandboxes/sb-delete");
    assertThat(HostLeaks.processesUnder(dir)).hasSizeGreaterThanOrEqualTo(2);

    ssh.destroy(sandbox.handle());
    ssh.destroy(sandbox.handle()); // idempotent

    org.awaitility.Awaitility.await()
        .atMost(java.time.Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(HostLeaks.processesUnder(dir)).isEmpty());
    assertThat(dir).doesNotExist();
    assertThat(ssh.inspect(sandbox.handle()).status()).isEqualTo(SandboxStatus.MISSING);
  }
}
