package dev.paddock.controlplane;

import dev.paddock.api.settings.Setting;
import dev.paddock.api.settings.Settings;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * The operator's bounds on the start queue, which a create joins only when it asks to (a queue
 * timeout) and finds no free slot. Immutable.
 *
 * @param maxLength most creates waiting at once across all users; one more is refused at once
 * @param maxTimeout the longest queue timeout a create may ask for
 * @param lease how long a waiting create's entry stays valid without its control plane renewing it;
 *     an entry whose lease ran out belongs to a control plane that stopped, and is failed
 */
public record QueueSettings(int maxLength, Duration maxTimeout, Duration lease) {
  public static final Setting<Integer> MAX_LENGTH =
      Setting.integer(
              "PADDOCK_QUEUE_MAX_LENGTH",
              "most creates waiting in the start queue at once (all users)",
              1,
              1_000_000)
          .withDefault(100);
  public static final Setting<Duration> MAX_TIMEOUT =
      Setting.duration(
              "PADDOCK_QUEUE_MAX_TIMEOUT", "the longest queue_timeout a create may ask for")
          .requiring(d -> !d.isZero(), "a positive duration such as 600 (seconds) or 10m")
          .withDefault(Duration.ofMinutes(10));
  public static final Setting<Duration> LEASE =
      Setting.duration(
              "PADDOCK_QUEUE_LEASE",
              "how long a queued create outlives its control plane before it is failed")
          .requiring(d -> d.toMillis() >= 300, "at least 300ms, such as 15 (seconds)")
          .withDefault(Duration.ofSeconds(15));

  /** Every setting above, in the order help lists them. */
  public static final List<Setting<?>> ALL = List.of(MAX_LENGTH, MAX_TIMEOUT, LEASE);

  /** 100 waiting creates, queue timeouts up to 10 minutes, a 15 s lease. */
  public static final QueueSettings DEFAULTS =
      new QueueSettings(100, Duration.ofMinutes(10), Duration.ofSeconds(15));

  public QueueSettings {
    if (maxLength < 1) {
      throw new IllegalArgumentException("maxLength must be at least 1, got " + maxLength);
    }
    Objects.requireNonNull(maxTimeout, "maxTimeout");
    Objects.requireNonNull(lease, "lease");
    if (maxTimeout.isNegative() || maxTimeout.isZero() || lease.toMillis() < 300) {
      throw new IllegalArgumentException(
          "maxTimeout must be positive and lease at least 300 ms, got "
              + maxTimeout
              + ", "
              + lease);
    }
  }

  /** The settings {@link #ALL} names, each defaulted. */
  public static QueueSettings fromSettings(Settings settings) {
    return new QueueSettings(
        settings.get(MAX_LENGTH), settings.get(MAX_TIMEOUT), settings.get(LEASE));
  }
}
