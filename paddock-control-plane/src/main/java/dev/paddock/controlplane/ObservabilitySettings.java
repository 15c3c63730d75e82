package dev.paddock.controlplane;

import dev.paddock.api.settings.Setting;
import dev.paddock.api.settings.Settings;
import java.time.Duration;
import java.util.List;

/**
 * Per-sandbox metrics, and how long what a sandbox leaves behind is kept: its log after delete, and
 * sandboxes that ended (ERROR, MISSING; PAUSED when the operator says so) before they are reaped
 * (deleted, archiving first when archives are on). {@code paddock server} reads them.
 */
public final class ObservabilitySettings {
  public static final Setting<Duration> LOG_RETENTION =
      Setting.duration(
              "PADDOCK_LOG_RETENTION",
              "how long a sandbox's log (lifecycle events and agent output) is kept after delete")
          .requiring(d -> !d.isZero(), "a positive duration such as 7d or 12h")
          .withDefault(Duration.ofDays(7));
  public static final Setting<Long> LOG_MAX_BYTES =
      Setting.size("PADDOCK_LOG_MAX_BYTES", "most bytes of one sandbox's kept log")
          .requiring(n -> n >= KeptLogs.MIN_BYTES, "at least 64k")
          .withDefault(4L << 20);
  public static final Setting<Duration> REAP_AFTER =
      Setting.duration(
              "PADDOCK_REAP_AFTER",
              "delete ERROR and MISSING sandboxes this long after their last change (archiving"
                  + " first when on); 0: never")
          .withDefault(Duration.ofHours(24));
  public static final Setting<Duration> REAP_PAUSED_AFTER =
      Setting.duration(
              "PADDOCK_REAP_PAUSED_AFTER",
              "delete PAUSED sandboxes (also those paused when their lifetime ended) this long"
                  + " after their last change; 0: never")
          .withDefault(Duration.ZERO)
          .withDefaultText("never");

  public static final Setting<Boolean> METRICS_PER_SANDBOX =
      Setting.bool(
              "PADDOCK_METRICS_PER_SANDBOX",
              "/metrics has CPU, memory, pids, disk and network series per RUNNING sandbox")
          .withDefault(false);
  public static final Setting<Integer> METRICS_MAX_SANDBOXES =
      Setting.integer(
              "PADDOCK_METRICS_MAX_SANDBOXES",
              "most sandboxes with per-sandbox series in one scrape (the oldest first)",
              1,
              100_000)
          .withDefault(500);

  /** Every setting above, in the order help lists them. */
  public static final List<Setting<?>> ALL =
      List.of(
          METRICS_PER_SANDBOX,
          METRICS_MAX_SANDBOXES,
          LOG_RETENTION,
          LOG_MAX_BYTES,
          REAP_AFTER,
          REAP_PAUSED_AFTER);

  private ObservabilitySettings() {}

  /** The kept logs' retention and cap. */
  public static KeptLogs.Limits logLimits(Settings settings) {
    return new KeptLogs.Limits(settings.get(LOG_RETENTION), settings.get(LOG_MAX_BYTES));
  }

  /** When ended and paused sandboxes are reaped. */
  public static SandboxReaper.Ages reapAges(Settings settings) {
    return new SandboxReaper.Ages(settings.get(REAP_AFTER), settings.get(REAP_PAUSED_AFTER));
  }
}
