package dev.paddock.backend.docker;

import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * The one backoff of the backend's engine calls that dockerd 20.10 refuses under load (pause and
 * unpause answer 409 or 500, remove answers 409 while a removal is under way): up to {@link
 * #ATTEMPTS} tries, 20 ms doubling to 500 ms between them. The sleeps pace retries of a remote
 * call; they are not synchronisation.
 */
final class EngineRetry {
  static final int ATTEMPTS = 20;
  private static final Duration FIRST = Duration.ofMillis(20);
  private static final Duration MOST = Duration.ofMillis(500);

  private EngineRetry() {}

  /**
   * Tries {@code attempt} until it reports done.
   *
   * @return false when every attempt said not yet
   */
  static boolean until(BooleanSupplier attempt) {
    Duration backoff = FIRST;
    for (int i = 0; i < ATTEMPTS; i++) {
      if (attempt.getAsBoolean()) {
        return true;
      }
      sleep(backoff);
      backoff = backoff.multipliedBy(2).compareTo(MOST) > 0 ? MOST : backoff.multipliedBy(2);
    }
    return false;
  }

  /** Pauses between polls of the engine (not synchronisation: the engine has no events here). */
  static void sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}
