package dev.paddock.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.awaitility.Awaitility;

/**
 * The after-each check that a test left no process behind: every descendant of this JVM (commands,
 * sessions, zygotes and whatever they started) must be gone.
 */
public final class ChildProcesses {
  private ChildProcesses() {}

  /**
   * Waits up to 10 s, polling every 50 ms, until no descendant of this JVM is alive; fails the test
   * naming those still alive otherwise.
   */
  public static void awaitNoneLeft() {
    Awaitility.await("no process left behind")
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(50))
        .untilAsserted(
            () ->
                assertThat(ProcessHandle.current().descendants().filter(ProcessHandle::isAlive))
                    .as("processes left behind by the test")
                    .isEmpty());
  }
}
