package dev.paddock.controlplane;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A clock that starts at the real time and moves one millisecond forward on every reading, so
 * sandboxes created one after the other never share a creation time (their order is then the one
 * "newest first" must show). Thread-safe.
 */
public final class TickingClock extends Clock {
  private final AtomicLong millis = new AtomicLong(System.currentTimeMillis());

  @Override
  public ZoneId getZone() {
    return ZoneOffset.UTC;
  }

  @Override
  public Clock withZone(ZoneId zone) {
    throw new UnsupportedOperationException("UTC only");
  }

  /** Moves the clock {@code by} forward (lifetimes, deadlines). */
  public void advance(java.time.Duration by) {
    millis.addAndGet(by.toMillis());
  }

  @Override
  public Instant instant() {
    return Instant.ofEpochMilli(millis.incrementAndGet());
  }
}
