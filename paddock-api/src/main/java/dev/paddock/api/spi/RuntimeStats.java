package dev.paddock.api.spi;

import java.time.Instant;
import java.util.Objects;
import java.util.OptionalLong;

/**
 * One reading of a runtime's resource use, taken when asked (never cached by the backend). Current
 * CPU use is the difference of two readings over their {@link #readAt} times; the control plane
 * computes it.
 *
 * @param readAt when it was read
 * @param cpuSeconds CPU time used since the runtime started (user + system, every process)
 * @param memoryBytes memory in use now
 * @param memoryPeakBytes the most memory used, where the backend can read it
 * @param pids processes (or threads, for cgroup pids counters) alive now
 * @param diskBytes bytes the workspace holds, where the backend can read it cheaply
 * @param networkRxBytes bytes received, where the runtime has its own network
 * @param networkTxBytes bytes sent, likewise
 */
public record RuntimeStats(
    Instant readAt,
    double cpuSeconds,
    long memoryBytes,
    OptionalLong memoryPeakBytes,
    long pids,
    OptionalLong diskBytes,
    OptionalLong networkRxBytes,
    OptionalLong networkTxBytes) {
  public RuntimeStats {
    Objects.requireNonNull(readAt, "readAt");
    Objects.requireNonNull(memoryPeakBytes, "memoryPeakBytes");
    Objects.requireNonNull(diskBytes, "diskBytes");
    Objects.requireNonNull(networkRxBytes, "networkRxBytes");
    Objects.requireNonNull(networkTxBytes, "networkTxBytes");
  }
}
