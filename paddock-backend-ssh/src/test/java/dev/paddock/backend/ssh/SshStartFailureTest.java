package dev.paddock.backend.ssh;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeStartException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Each start failure provoked for real against a real sshd, classified into the backend's own kinds
 * with a safe message that names neither host nor path, and nothing left on the host.
 */
class SshStartFailureTest {
  private static TestSshd sshd;

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

  private static RuntimeFailure startFailure(Map<String, String> overrides) {
    SshBackend backend = SshBackend.create(SshSettings.from(sshd.settings(overrides)));
    try {
      Throwable thrown =
          org.assertj.core.api.Assertions.catchThrowable(() -> Agents.start(backend, "sb-fails"));
      assertThat(thrown).isInstanceOf(RuntimeStartException.class);
      return ((RuntimeStartException) thrown).failure();
    } finally {
      backend.close();
    }
  }

  private static void assertSafe(RuntimeFailure failure) {
    assertThat(failure.safeMessage())
        .doesNotContain("127.0.0.1")
        .doesNotContain(sshd.remoteDir().toString())
        .doesNotContain(Integer.toString(sshd.port()));
  }

  @Test
  void aKeyTheHostDoesNotAcceptIsAuthenticationRefused() {
    RuntimeFailure failure = startFailure(Map.of("ssh.key-file", sshd.otherKey().toString()));
    assertThat(failure.kind()).isEqualTo(SshFailure.AUTH_REFUSED.kind());
    assertThat(failure.rawDetail()).containsIgnoringCase("permission denied");
    assertSafe(failure);
  }

  @Test
  void aHostPresentingAnotherKeyIsRefusedAsAMismatchBeforeAnythingRuns() {
    var untouched = sshd.remoteDir().resolveSibling("untouched");
    RuntimeFailure failure =
        startFailure(
            Map.of(
                "ssh.known-hosts", sshd.wrongKnownHosts().toString(),
                "ssh.remote-dir", untouched.toString()));
    assertThat(failure.kind()).isEqualTo(SshFailure.HOST_KEY_MISMATCH.kind());
    assertThat(failure.rawDetail()).containsIgnoringCase("host key");
    assertThat(Files.exists(untouched)).as("nothing was done on the host").isFalse();
    assertSafe(failure);
  }

  @Test
  void aPortNobodyListensOnIsHostUnreachable() throws IOException {
    int closed;
    try (ServerSocket socket = new ServerSocket()) {
      socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      closed = socket.getLocalPort();
    }
    String target = System.getProperty("user.name") + "@127.0.0.1:" + closed;
    RuntimeFailure failure = startFailure(Map.of("ssh.hosts", target));
    assertThat(failure.kind()).isEqualTo(SshFailure.HOST_UNREACHABLE.kind());
    assertThat(failure.rawDetail()).containsIgnoringCase("connection refused");
  }

  @Test
  void aHostWithLessFreeDiskThanRequiredIsDiskFull() {
    RuntimeFailure failure = startFailure(Map.of("ssh.min-free-disk", "1000000g"));
    assertThat(failure.kind()).isEqualTo(SshFailure.DISK_FULL.kind());
    assertThat(failure.safeMessage()).isEqualTo("The sandbox host is out of disk space.");
  }

  @Test
  void anUnreachableHostIsSkippedForOneThatAnswers() throws IOException {
    int closed;
    try (ServerSocket socket = new ServerSocket()) {
      socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      closed = socket.getLocalPort();
    }
    String dead = System.getProperty("user.name") + "@127.0.0.1:" + closed;
    SshBackend backend =
        SshBackend.create(
            SshSettings.from(sshd.settings(Map.of("ssh.hosts", dead + "," + sshd.target()))));
    try (Agents agents = new Agents()) {
      Agents.Sandbox sandbox = Agents.start(backend, "sb-second-host");
      assertThat(sandbox.handle().attributes().get(SshBackend.HOST)).isEqualTo(sshd.target());
      assertThat(
              Agents.stdout(
                  agents.exec(Agents.url(backend, sandbox.handle()), sandbox.key(), "echo ok")))
          .contains("ok");
      backend.destroy(sandbox.handle());
    } finally {
      backend.close();
    }
  }

  @Test
  void missingSettingsAreNamed() {
    assertThatThrownBy(() -> SshSettings.from(Map.of()))
        .hasMessageContaining("ssh.hosts")
        .hasMessageContaining("PADDOCK_SSH_HOSTS");
    assertThatThrownBy(() -> SshSettings.from(Map.of("ssh.hosts", "me@-oProxyCommand=x")))
        .hasMessageContaining("ssh.hosts");
    assertThatThrownBy(
            () -> SshSettings.from(Map.of("ssh.hosts", "me@h", "ssh.key-file", "/no/such/key")))
        .hasMessageContaining("ssh.key-file");
  }
}
