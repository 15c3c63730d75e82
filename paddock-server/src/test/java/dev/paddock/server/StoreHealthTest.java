package dev.paddock.server;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.store.SandboxStore;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * {@code /health}'s view of the store, on a clock the test moves and a store whose pings it holds.
 */
class StoreHealthTest {
  private final AtomicLong clock = new AtomicLong(1_000);
  private final AtomicInteger pings = new AtomicInteger();
  private final CountDownLatch releaseFirst = new CountDownLatch(1);

  /** A store whose first ping hangs (a half-open connection) until released; later ones answer. */
  private final SandboxStore store =
      (SandboxStore)
          Proxy.newProxyInstance(
              SandboxStore.class.getClassLoader(),
              new Class<?>[] {SandboxStore.class},
              (proxy, method, args) -> {
                if (!method.getName().equals("ping")) {
                  throw new UnsupportedOperationException(method.getName());
                }
                if (pings.incrementAndGet() == 1) {
                  releaseFirst.await(30, TimeUnit.SECONDS);
                }
                return null;
              });

  @Test
  void aStuckPingIsNoAnswerAndTheNextCheckTakesOverSoAStoreThatAnswersIsSeenAtOnce() {
    StoreHealth health = new StoreHealth(store, clock::get);
    try {
      clock.addAndGet(StoreHealth.MAX_AGE_NANOS + 1);
      assertThat(health.answers()).as("the last answer stands while a ping is in flight").isTrue();
      Awaitility.await("the first ping is under way").until(() -> pings.get() == 1);

      clock.addAndGet(StoreHealth.STUCK_NANOS + 1);

      assertThat(health.answers()).as("a ping stuck past the limit is no answer").isFalse();
      Awaitility.await("a new ping, taken beside the stuck one, answers")
          .atMost(Duration.ofSeconds(10))
          .until(health::answers);
      assertThat(pings).hasValue(2);
    } finally {
      releaseFirst.countDown();
    }
  }

  @Test
  void aFreshAnswerIsNotPingedAgain() {
    StoreHealth health = new StoreHealth(store, clock::get);

    assertThat(health.answers()).isTrue();
    assertThat(health.answers()).isTrue();

    assertThat(pings).as("no ping within a second of the last check").hasValue(0);
  }
}
