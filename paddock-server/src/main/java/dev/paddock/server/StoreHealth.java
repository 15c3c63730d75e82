package dev.paddock.server;

import dev.paddock.store.SandboxStore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * Whether the store answers, as {@code GET /health} tells it: the outcome of the last ping, taken
 * in the background when the last is more than {@link #MAX_AGE_NANOS} old, one at a time, so that
 * {@code /health} answers at once and never waits on the store itself (the load suite times it
 * under load). A ping that has not come back after {@link #STUCK_NANOS} counts as no answer, and
 * the next {@code /health} starts a new one beside it. Thread-safe: volatile fields, and one atomic
 * that says since when a ping is in flight.
 */
final class StoreHealth {
  // The platform logger, as paddock-http's: the server binds it to the one log (SLF4J).
  private static final System.Logger LOG = System.getLogger("paddock.server");
  static final long MAX_AGE_NANOS = 1_000_000_000L;
  static final long STUCK_NANOS = 5_000_000_000L;
  private static final long NONE = 0;

  private final SandboxStore store;
  private final LongSupplier nanoTime;

  /** {@link System#nanoTime()} when the ping in flight began; {@link #NONE} when none is. */
  private final AtomicLong pingingSince = new AtomicLong(NONE);

  private volatile boolean answered = true; // it was just opened (and migrated)
  private volatile long checkedAt;

  StoreHealth(SandboxStore store) {
    this(store, System::nanoTime);
  }

  /** With {@code nanoTime} as its clock (tests). */
  StoreHealth(SandboxStore store, LongSupplier nanoTime) {
    this.store = store;
    this.nanoTime = nanoTime;
    this.checkedAt = nanoTime.getAsLong();
  }

  /**
   * Whether the store answered its last ping; starts the next one when that one is stale, or takes
   * over from one that is stuck (a half-open connection can hold a ping for as long as TCP takes to
   * give up: minutes), so a store that is back is seen at once.
   */
  boolean answers() {
    long now = nanoTime.getAsLong() | 1; // never NONE
    long since = pingingSince.get();
    boolean stuck = since != NONE && now - since > STUCK_NANOS;
    boolean due = since == NONE ? now - checkedAt > MAX_AGE_NANOS : stuck;
    if (due && pingingSince.compareAndSet(since, now)) {
      if (stuck) {
        answered = false; // the stuck ping is no answer, whatever the next one finds
      }
      // Read before the ping starts: one that comes back at once must not answer this check, which
      // found the store stuck (the next check reads what it found).
      boolean answer = answered;
      Thread.ofVirtual().name("paddock-store-ping").start(() -> ping(now));
      return answer;
    }
    return answered && !stuck;
  }

  /** One ping, begun at {@code started}; its outcome counts only while it is the current one. */
  private void ping(long started) {
    boolean ok;
    try {
      store.ping();
      ok = true;
    } catch (RuntimeException e) {
      if (answered) {
        LOG.log(System.Logger.Level.WARNING, "the store does not answer: " + e.getMessage());
      }
      ok = false;
    }
    if (pingingSince.get() == started) {
      answered = ok;
      checkedAt = nanoTime.getAsLong();
      pingingSince.compareAndSet(started, NONE);
    }
  }
}
