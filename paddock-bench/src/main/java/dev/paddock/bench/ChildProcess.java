package dev.paddock.bench;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A process the bench started, stopped on {@link #close()}: SIGTERM, a grace period, then SIGKILL
 * for it and for any descendant still alive, and a wait until it is really gone. Interrupted while
 * waiting, it kills at once and keeps the thread's interrupt flag set.
 */
final class ChildProcess implements AutoCloseable {
  private static final long GRACE_SECONDS = 5;

  private final Process process;

  ChildProcess(Process process) {
    this.process = process;
  }

  Process process() {
    return process;
  }

  long pid() {
    return process.pid();
  }

  @Override
  public void close() {
    List<ProcessHandle> descendants = process.descendants().toList();
    process.destroy();
    try {
      if (!process.waitFor(GRACE_SECONDS, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(GRACE_SECONDS, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
    for (ProcessHandle child : descendants) {
      child.destroyForcibly();
    }
    if (process.isAlive() && !Thread.currentThread().isInterrupted()) {
      throw new IllegalStateException(
          "process " + process.pid() + " survived SIGKILL; stop it by hand");
    }
  }
}
