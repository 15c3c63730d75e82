package dev.paddock.backend.process;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Waits for kernel state that offers no blocking notification to Java (a cgroup reading back
 * frozen, a cgroup emptying). Checks at once, then with a backoff from 1 ms to 16 ms, so a state
 * that is reached quickly is seen quickly. Never used for agent readiness, which is signalled.
 */
final class Poll {
  private Poll() {}

  /**
   * Whether {@code done} became true within {@code timeout}. On interrupt it returns the last
   * answer at once and keeps the interrupt flag set.
   */
  static boolean until(BooleanSupplier done, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    long pause = Duration.ofMillis(1).toNanos();
    while (!done.getAsBoolean()) {
      if (System.nanoTime() - deadline >= 0 || Thread.currentThread().isInterrupted()) {
        return done.getAsBoolean();
      }
      LockSupport.parkNanos(pause);
      pause = Math.min(pause * 2, Duration.ofMillis(16).toNanos());
    }
    return true;
  }
}
