package dev.paddock.server;

import dev.paddock.api.SandboxLogs;
import dev.paddock.api.SandboxUsage;
import java.util.Objects;

/**
 * What the API serves about sandboxes beyond their state: their resource use ({@code GET
 * /api/v1/sandboxes/{id}/stats}, and per-sandbox series in {@code /metrics} when on) and their kept
 * logs ({@code GET /api/v1/sandboxes/{id}/logs}).
 *
 * @param usage resource use of running sandboxes
 * @param logs the kept logs
 * @param perSandboxMetrics whether {@code /metrics} has one set of series per RUNNING sandbox
 * @param maxSandboxSeries most sandboxes with series in one scrape (the oldest first); the rest are
 *     counted in {@code paddock_sandbox_series_dropped}
 */
public record Observability(
    SandboxUsage usage, SandboxLogs logs, boolean perSandboxMetrics, int maxSandboxSeries) {
  public Observability {
    Objects.requireNonNull(usage, "usage");
    Objects.requireNonNull(logs, "logs");
    if (maxSandboxSeries < 1) {
      throw new IllegalArgumentException(
          "maxSandboxSeries must be at least 1, got " + maxSandboxSeries);
    }
  }
}
