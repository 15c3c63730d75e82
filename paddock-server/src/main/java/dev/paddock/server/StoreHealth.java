package dev.paddock.server;

import dev.paddock.store.SandboxStore;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Whether the store answers, as {@code GET /health} tells it: the outcome of the last ping, taken
 * in the background when the last is more than {@link #MAX_AGE_NANOS} old, one at a time, so that
 * {@code /health} answers at once and never waits on the store itself (the load suite times it
 * under load). A ping that has not come back after {@link #STUCK_NANOS} counts as no answer.
 * Thread-safe: volatile fields, and one atomic that says since when a ping is in flight.
 */
final class StoreHealth {
  // The platform logger, as paddock-http's: the server binds it to the one log (SLF4J).
  private static final System.Logger LOG = System.getLogger("paddock.server");
  static final long MAX_AGE_NANOS = 1_000_000_000L;
  static final long STUCK_NANOS = 5_000_000_000L;
  private static final long NONE = 0;

  private final SandboxStore store;

  /** {@link System#nanoTime()} when the ping in flight began; {@link #NONE} when none is. */
  private final AtomicLong pingingSince = new AtomicLong(NONE);

  private volatile boolean answered = true; // it was just opened (and migrated)
  private volatile long checkedAt = System.nanoTime();

  StoreHealth(SandboxStore store) {
    this.store = store;
  }

  /** Whether the store answered its last ping; starts the next one when that one is stale. */
  boolean answers() {
    long now = System.nanoTime() | 1; // never NONE
    if (now - checkedAt > MAX_AGE_NANOS && pingingSince.compareAndSet(NONE, now)) {
      Thread.ofVirtual().name("paddock-store-ping").start(this::ping);
    }
    long since = pingingSince.get();
    boolean stuck = since != NONE && now - since > STUCK_NANOS;
    return answered && !stuck;
  }

  private void ping() {
    try {
      store.ping();
      answered = true;
    } catch (RuntimeException e) {
      if (answered) {
        LOG.log(System.Logger.Level.WARNING, "the store does not answer: " + e.getMessage());
      }
      answered = false;
    } finally {
      checkedAt = System.nanoTime();
      pingingSince.set(NONE);
    }
  }
}
