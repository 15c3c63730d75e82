package dev.paddock.api;

import java.time.Instant;
import java.util.Objects;
import java.util.OptionalDouble;
import java.util.OptionalLong;

/**
 * One reading of a RUNNING sandbox's resource use. A field is empty where its backend cannot read
 * it (never zero in its place).
 *
 * @param sandboxId the sandbox
 * @param readAt when it was read
 * @param cpuSeconds CPU time its processes used since it started (user + system)
 * @param cpuPercent CPU use since the previous reading of the same sandbox, in percent of one core
 *     (200 = two cores busy); empty on a first reading or when the previous one is too old to say
 *     what "now" is
 * @param memoryBytes memory in use now
 * @param memoryPeakBytes the most memory it used
 * @param pids processes (or threads, where the runtime counts those) alive now
 * @param diskBytes bytes its workspace holds
 * @param networkRxBytes bytes received, where it has its own network
 * @param networkTxBytes bytes sent, likewise
 */
public record SandboxStats(
    String sandboxId,
    Instant readAt,
    OptionalDouble cpuSeconds,
    OptionalDouble cpuPercent,
    OptionalLong memoryBytes,
    OptionalLong memoryPeakBytes,
    OptionalLong pids,
    OptionalLong diskBytes,
    OptionalLong networkRxBytes,
    OptionalLong networkTxBytes) {
  public SandboxStats {
    Objects.requireNonNull(sandboxId, "sandboxId");
    Objects.requireNonNull(readAt, "readAt");
    Objects.requireNonNull(cpuSeconds, "cpuSeconds");
    Objects.requireNonNull(cpuPercent, "cpuPercent");
    Objects.requireNonNull(memoryBytes, "memoryBytes");
    Objects.requireNonNull(memoryPeakBytes, "memoryPeakBytes");
    Objects.requireNonNull(pids, "pids");
    Objects.requireNonNull(diskBytes, "diskBytes");
    Objects.requireNonNull(networkRxBytes, "networkRxBytes");
    Objects.requireNonNull(networkTxBytes, "networkTxBytes");
  }
}
