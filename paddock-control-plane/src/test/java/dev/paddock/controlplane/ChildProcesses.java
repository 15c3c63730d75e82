package dev.paddock.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.awaitility.Awaitility;

/**
 * The after-each check that a test left no process behind: every descendant of this JVM (agents,
 * their commands and whatever those started) must be gone. Test code only.
 */
public final class ChildProcesses {
  private ChildProcesses() {}

  /**
   * Waits up to {@code atMost}, polling every 50 ms, until no descendant of this JVM is alive;
   * fails the test otherwise, the wait named {@code alias} and the processes still alive listed.
   */
  public static void awaitNoneLeft(String alias, Duration atMost) {
    Awaitility.await(alias)
        .atMost(atMost)
        .pollInterval(Duration.ofMillis(50))
        .untilAsserted(
            () ->
                assertThat(ProcessHandle.current().descendants().filter(ProcessHandle::isAlive))
                    .as("processes left behind")
                    .isEmpty());
  }
}
