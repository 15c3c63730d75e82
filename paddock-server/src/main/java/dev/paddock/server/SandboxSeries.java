package dev.paddock.server;

import dev.paddock.api.SandboxStats;
import dev.paddock.api.SandboxStatus;
import dev.paddock.store.SandboxStore;
import java.util.List;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import java.util.function.Function;

/**
 * The per-sandbox series of {@code /metrics} (opt-in, {@code PADDOCK_METRICS_PER_SANDBOX}): one
 * reading of each RUNNING sandbox per scrape, labelled {@code sandbox_id}, for at most {@link
 * Observability#maxSandboxSeries()} sandboxes (the oldest first), so a scrape's size stays bounded
 * whatever runs; how many were left out is {@code paddock_sandbox_series_dropped}. Sandboxes that
 * stopped drop out of the next scrape. A value the backend cannot read is left out, not zero.
 */
final class SandboxSeries {
  private record Family(
      String name, String type, String help, Function<SandboxStats, OptionalDouble> value) {}

  private static final List<Family> FAMILIES =
      List.of(
          new Family(
              "paddock_sandbox_cpu_seconds_total",
              "counter",
              "CPU time used by the sandbox's processes.",
              SandboxStats::cpuSeconds),
          new Family(
              "paddock_sandbox_memory_bytes",
              "gauge",
              "Memory the sandbox uses now.",
              s -> real(s.memoryBytes())),
          new Family(
              "paddock_sandbox_memory_peak_bytes",
              "gauge",
              "The most memory the sandbox used.",
              s -> real(s.memoryPeakBytes())),
          new Family(
              "paddock_sandbox_pids",
              "gauge",
              "Processes alive in the sandbox.",
              s -> real(s.pids())),
          new Family(
              "paddock_sandbox_disk_bytes",
              "gauge",
              "Bytes the sandbox's workspace holds.",
              s -> real(s.diskBytes())),
          new Family(
              "paddock_sandbox_network_receive_bytes_total",
              "counter",
              "Bytes the sandbox received (own network only).",
              s -> real(s.networkRxBytes())),
          new Family(
              "paddock_sandbox_network_transmit_bytes_total",
              "counter",
              "Bytes the sandbox sent (own network only).",
              s -> real(s.networkTxBytes())));

  private final Observability observability;

  SandboxSeries(Observability observability) {
    this.observability = observability;
  }

  /** The series text; empty when per-sandbox metrics are off. */
  String scrape(SandboxStore store) {
    if (!observability.perSandboxMetrics()) {
      return "";
    }
    int running = store.withStatus(List.of(SandboxStatus.RUNNING)).size();
    int max = observability.maxSandboxSeries();
    List<SandboxStats> readings = observability.usage().running(max);
    StringBuilder out = new StringBuilder(256 + readings.size() * 7 * 64);
    for (Family family : FAMILIES) {
      out.append("# HELP ").append(family.name()).append(' ').append(family.help()).append('\n');
      out.append("# TYPE ").append(family.name()).append(' ').append(family.type()).append('\n');
      for (SandboxStats s : readings) {
        OptionalDouble value = family.value().apply(s);
        if (value.isPresent()) {
          out.append(family.name())
              .append("{sandbox_id=\"")
              .append(Metrics.escape(s.sandboxId()))
              .append("\"} ")
              .append(number(value.getAsDouble()))
              .append('\n');
        }
      }
    }
    out.append("# HELP paddock_sandbox_series_dropped RUNNING sandboxes left out of the series.\n");
    out.append("# TYPE paddock_sandbox_series_dropped gauge\n");
    out.append("paddock_sandbox_series_dropped ")
        .append(Math.max(0, running - readings.size()))
        .append('\n');
    return out.toString();
  }

  private static OptionalDouble real(OptionalLong value) {
    return value.isPresent() ? OptionalDouble.of(value.getAsLong()) : OptionalDouble.empty();
  }

  private static String number(double value) {
    return value == Math.rint(value) && Math.abs(value) < 1e15
        ? Long.toString((long) value)
        : Double.toString(value);
  }
}
