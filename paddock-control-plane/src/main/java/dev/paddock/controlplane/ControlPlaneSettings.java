package dev.paddock.controlplane;

import dev.paddock.api.settings.Setting;
import java.time.Duration;
import java.util.List;

/**
 * The settings the control plane reads: capacity, start timeout, and the operator's defaults and
 * maxima for what a create may ask for. {@code paddock server} applies them to {@link
 * ControlPlaneConfig}.
 */
public final class ControlPlaneSettings {
  public static final Setting<Integer> MAX_SANDBOXES =
      Setting.integer(
              "PADDOCK_MAX_SANDBOXES",
              "most sandboxes STARTING or RUNNING at once",
              1,
              Integer.MAX_VALUE)
          .withDefaultText("no limit");
  public static final Setting<Integer> MAX_SANDBOXES_PER_USER =
      Setting.integer(
              "PADDOCK_MAX_SANDBOXES_PER_USER",
              "most STARTING or RUNNING sandboxes of one owner",
              1,
              Integer.MAX_VALUE)
          .withDefaultText("no limit");
  public static final Setting<Boolean> PAUSE_OLDEST =
      Setting.bool(
              "PADDOCK_PAUSE_OLDEST",
              "past a limit, pause the oldest RUNNING sandbox instead of refusing (429)")
          .withDefault(false);
  public static final Setting<Duration> START_TIMEOUT =
      Setting.duration(
              "PADDOCK_START_TIMEOUT_SECONDS",
              "how long a start may take before it is declared failed")
          .requiring(d -> !d.isZero(), "a positive duration such as 120 (seconds) or 2m")
          .withDefault(Duration.ofSeconds(120));

  public static final Setting<String> REPLICA_ID =
      Setting.string(
              "PADDOCK_REPLICA_ID",
              "this control plane's name among replicas sharing one database (unique per replica)")
          .withDefaultText(
              "cp- and 16 random hex digits, made once and kept in the data dir's replica.id");
  public static final Setting<Duration> REPLICA_LEASE =
      Setting.duration(
              "PADDOCK_REPLICA_LEASE_SECONDS",
              "how long a replica's heartbeat and background lease last unrenewed: a killed"
                  + " replica's unfinished operations are taken over this long after it died")
          .requiring(d -> d.toMillis() >= 300, "at least 300ms, such as 15 (seconds)")
          .withDefault(Duration.ofSeconds(15));

  // What a create may ask for (issue 9): read by the create-with-a-body slice.

  public static final Setting<List<String>> ALLOWED_IMAGES =
      Setting.list(
              "PADDOCK_ALLOWED_IMAGES",
              "glob patterns of images a create may name (image-based backends); empty: only the"
                  + " configured specs")
          .withDefault(List.of());
  public static final Setting<Double> MAX_CPUS =
      Setting.decimal("PADDOCK_MAX_CPUS", "most CPU cores a create may ask for", 0)
          .withDefaultText("no limit");
  public static final Setting<Long> MAX_MEMORY =
      Setting.size("PADDOCK_MAX_MEMORY", "most memory a create may ask for; 0: no limit")
          .withDefaultText("no limit");
  public static final Setting<Integer> MAX_PIDS =
      Setting.integer(
              "PADDOCK_MAX_PIDS", "most processes a create may ask for", 1, Integer.MAX_VALUE)
          .withDefaultText("no limit");
  public static final Setting<Long> MAX_DISK =
      Setting.size("PADDOCK_MAX_DISK", "most workspace disk a create may ask for; 0: no limit")
          .withDefaultText("no limit");
  public static final Setting<Duration> DEFAULT_TIMEOUT =
      Setting.duration("PADDOCK_DEFAULT_TIMEOUT", "a sandbox's lifetime when its create names none")
          .withDefaultText("no limit");
  public static final Setting<Duration> MAX_TIMEOUT =
      Setting.duration("PADDOCK_MAX_TIMEOUT", "the longest lifetime a create may ask for")
          .withDefaultText("no limit");
  public static final Setting<Duration> DEFAULT_IDLE_TIMEOUT =
      Setting.duration(
              "PADDOCK_DEFAULT_IDLE_TIMEOUT",
              "how long a sandbox may sit idle when its create names no idle timeout")
          .withDefaultText("no limit");

  /** Every setting above, in the order help lists them. */
  public static final List<Setting<?>> ALL =
      List.of(
          MAX_SANDBOXES,
          MAX_SANDBOXES_PER_USER,
          PAUSE_OLDEST,
          START_TIMEOUT,
          REPLICA_ID,
          REPLICA_LEASE,
          ALLOWED_IMAGES,
          MAX_CPUS,
          MAX_MEMORY,
          MAX_PIDS,
          MAX_DISK,
          DEFAULT_TIMEOUT,
          MAX_TIMEOUT,
          DEFAULT_IDLE_TIMEOUT);

  private ControlPlaneSettings() {}
}
