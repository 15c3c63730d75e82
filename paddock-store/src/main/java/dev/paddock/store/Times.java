package dev.paddock.store;

import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/** The store keeps times as epoch milliseconds; what it returns is what it would read back. */
final class Times {
  private Times() {}

  static Instant now(Clock clock) {
    return clock.instant().truncatedTo(ChronoUnit.MILLIS);
  }

  static Instant truncate(Instant instant) {
    return instant.truncatedTo(ChronoUnit.MILLIS);
  }
}
