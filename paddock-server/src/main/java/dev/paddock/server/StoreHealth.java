package dev.paddock.server;

import dev.paddock.store.SandboxStore;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Whether the store answers, as {@code GET /health} tells it: the outcome of the last ping, taken
 * in the background when the last is more than {@link #MAX_AGE_NANOS} old, one at a time, so that
 * {@code /health} answers at once and never waits on the store itself (the load suite times it
 * under load). A ping that has not come back after {@link #STUCK_NANOS} counts as no answer.
 * Thread-safe: volatile fields and one flag.
 */
final class StoreHealth {
  // The platform logger, as paddock-http's: the server binds it to the one log (SLF4J).
  private static final System.Logger LOG = System.getLogger("paddock.server");
  static final long MAX_AGE_NANOS = 1_000_000_000L;
  static final long STUCK_NANOS = 5_000_000_000L;

  private final SandboxStore store;
  private final AtomicBoolean pinging = new AtomicBoolean();
  private volatile boolean answered = true; // it was just opened (and migrated)
  private volatile long checkedAt = System.nanoTime();
  private volatile long pingStartedAt;

  StoreHealth(SandboxStore store) {
    this.store = store;
  }

  /** Whether the store answered its last ping; starts the next one when that one is stale. */
  boolean answers() {
    long now = System.nanoTime();
    if (now - checkedAt > MAX_AGE_NANOS && pinging.compareAndSet(false, true)) {
      pingStartedAt = now;
      Thread.ofVirtual().name("paddock-store-ping").start(this::ping);
    }
    boolean stuck = pinging.get() && now - pingStartedAt > STUCK_NANOS;
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
      pinging.set(false);
    }
  }
}
