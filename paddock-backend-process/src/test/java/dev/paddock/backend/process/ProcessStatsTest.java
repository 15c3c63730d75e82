package dev.paddock.backend.process;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.Resources;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeStats;
import dev.paddock.api.spi.SandboxBackend;
import java.time.Duration;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code stats} of a real process sandbox follows what its commands do, and ends with it. */
class ProcessStatsTest {
  @RegisterExtension final SandboxFixture fixture = new SandboxFixture();

  @Test
  void statsFollowCpuMemoryProcessesAndWorkspaceOfTheCommands() throws Exception {
    SandboxBackend backend = fixture.backend();
    String id = fixture.newId();
    RuntimeHandle handle = backend.start(fixture.request(id));
    RuntimeStats idle = backend.stats(handle).orElseThrow();
    fixture.exec(handle, "head -c 3000000 /dev/urandom > blob.bin", 30);

    fixture.startCommand(handle, "sh -c 'while :; do :; done'");

    AtomicReference<RuntimeStats> busy = new AtomicReference<>();
    Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () -> {
              busy.set(backend.stats(handle).orElseThrow());
              return busy.get().cpuSeconds() >= idle.cpuSeconds() + 0.5;
            });
    RuntimeStats now = busy.get();
    assertThat(now.pids()).isGreaterThan(idle.pids());
    assertThat(now.memoryBytes()).isGreaterThan(10L << 20); // at least the agent's JVM
    assertThat(now.diskBytes()).hasValue(3_000_000L);
    assertThat(now.networkRxBytes()).isEmpty();
    assertThat(now.readAt()).isAfter(idle.readAt());

    backend.destroy(handle);
    assertThat(backend.stats(handle)).isEmpty();
  }

  @Test
  void aSandboxWithAMemoryLimitReportsItsCgroupsPeak() throws Exception {
    SandboxBackend backend = fixture.backend();
    String id = fixture.newId();
    SandboxSpec spec =
        SandboxSpec.builder("process-default")
            .resources(
                new Resources(
                    OptionalDouble.empty(),
                    OptionalLong.of(512L << 20),
                    OptionalInt.empty(),
                    OptionalLong.empty()))
            .build();
    RuntimeHandle handle = backend.start(fixture.request(id, spec));
    org.junit.jupiter.api.Assumptions.assumeTrue(
        handle.unenforcedLimits().isEmpty(), "needs a usable memory cgroup on this host");

    RuntimeStats stats = backend.stats(handle).orElseThrow();

    assertThat(stats.memoryPeakBytes()).isPresent();
    assertThat(stats.memoryPeakBytes().getAsLong()).isGreaterThanOrEqualTo(stats.memoryBytes());
    backend.destroy(handle);
  }
}
