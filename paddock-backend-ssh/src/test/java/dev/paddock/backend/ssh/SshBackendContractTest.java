package dev.paddock.backend.ssh;

import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.controlplane.SandboxBackendContract;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The SPI-level contract with the SSH backend against a real sshd on loopback: the agent runs on
 * the "host" (this machine, under the sshd's temporary directory) and is reached through a port
 * forward of the backend's master connection. Fails when a test leaves a sandbox directory,
 * process, cgroup or ssh client behind.
 */
class SshBackendContractTest extends SandboxBackendContract {
  private static TestSshd sshd;
  private static HostLeaks leaks;

  @BeforeAll
  static void startSshd() {
    sshd = TestSshd.start();
    leaks = new HostLeaks(sshd.remoteDir());
  }

  @AfterAll
  static void stopSshd() {
    if (sshd != null) {
      sshd.close();
    }
  }

  @Override
  protected SandboxBackend newBackend() {
    return new SshBackendProvider().create(sshd.settings(Map.of()));
  }

  /**
   * The labels as the host's kernel shows them: the agent process's own environment (the host is
   * this machine, so its {@code /proc} is ours to read).
   */
  @Override
  protected Optional<Map<String, String>> labelsOf(RuntimeHandle handle) {
    Path environ = Path.of("/proc", handle.attributes().get("pid"), "environ");
    try {
      Map<String, String> env =
          Arrays.stream(Files.readString(environ, StandardCharsets.UTF_8).split("\0"))
              .filter(entry -> entry.contains("="))
              .collect(
                  Collectors.toMap(
                      e -> e.substring(0, e.indexOf('=')),
                      e -> e.substring(e.indexOf('=') + 1),
                      (a, b) -> b));
      return Optional.of(
          Map.of(
              "paddock.managed", env.getOrDefault("PADDOCK_MANAGED", ""),
              "paddock.sandbox-id", env.getOrDefault("PADDOCK_SANDBOX_ID", "")));
    } catch (IOException e) {
      return Optional.of(Map.of()); // no such process: no labels, which the contract reports
    }
  }

  @Override
  protected void assertNothingLeaked() throws Exception {
    leaks.assertNone();
  }
}
