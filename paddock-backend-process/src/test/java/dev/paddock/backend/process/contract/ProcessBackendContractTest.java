package dev.paddock.backend.process.contract;

import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.backend.process.ProcessBackendProvider;
import dev.paddock.controlplane.SandboxBackendContract;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/** The SPI-level contract with the real process backend (agents as child processes). */
class ProcessBackendContractTest extends SandboxBackendContract {
  private final ProcessLeaks leaks = new ProcessLeaks();

  @Override
  protected SandboxBackend newBackend() {
    return new ProcessBackendProvider()
        .create(
            Map.of(
                "paddock.data-dir", leaks.dataDir().toString(),
                "agent.command", ProcessBackendProvider.classPathAgentCommand(),
                "process.stop-grace", "3s"));
  }

  /** The labels as the kernel shows them: the agent process's own environment. */
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
    leaks.assertNothingLeaked();
  }
}
