package dev.paddock.backend.remote;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.SandboxSpec;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.controlplane.MarkedProcesses;
import dev.paddock.controlplane.SandboxBackendContract;
import java.time.Duration;
import java.util.Set;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The SPI-level contract with {@code RUNTIME=remote} over two real runtime API processes (the
 * process backend under each): what the control plane's backend sees, state, pause, labels,
 * adoption by a second instance, comes from their answers.
 */
class RemoteBackendContractTest extends SandboxBackendContract {
  private static RuntimeApiProcesses runtimeApis;
  private final Set<String> markedBefore = MarkedProcesses.snapshot();

  @BeforeAll
  static void startRuntimeApis() {
    runtimeApis = RuntimeApiProcesses.start(2, 50);
  }

  @AfterAll
  static void stopRuntimeApis() {
    if (runtimeApis != null) {
      runtimeApis.close();
    }
  }

  @Override
  protected SandboxBackend newBackend() {
    return runtimeApis.backend("backend-contract");
  }

  @Override
  protected SandboxSpec spec() {
    return SandboxSpec.builder("process-default").build();
  }

  @Override
  protected void assertNothingLeaked() throws Exception {
    Awaitility.await("no agent left under the runtime APIs")
        .atMost(Duration.ofSeconds(15))
        .pollInterval(Duration.ofMillis(50))
        .untilAsserted(
            () -> {
              assertThat(runtimeApis.processesInDataDirs()).isEmpty();
              assertThat(MarkedProcesses.newSince(markedBefore))
                  .as("Paddock-marked processes left on the machine (orphans included)")
                  .isEmpty();
            });
    assertThat(runtimeApis.sandboxDirs()).as("sandbox directories left behind").isEmpty();
  }
}
