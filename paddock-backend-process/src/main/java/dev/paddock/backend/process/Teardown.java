package dev.paddock.backend.process;

import dev.paddock.api.SandboxException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Removes a sandbox: SIGTERM to the agent (its shutdown hook stops its commands), up to the grace
 * for it to exit, then SIGKILL to every process left in its freezer and every process carrying its
 * label, then its cgroups (freezer and limits) and its directory. Every step runs even when an
 * earlier one failed; the first failure is thrown with the others suppressed. A sandbox that is
 * already gone passes through every step as a no-op.
 */
final class Teardown {
  private static final Duration GONE = Duration.ofSeconds(10);

  private final Signals signals;
  private final ProcFs procFs;

  Teardown(Signals signals, ProcFs procFs) {
    this.signals = signals;
    this.procFs = procFs;
  }

  /**
   * Tears the sandbox down; {@code grace} zero skips SIGTERM (an aborted start).
   *
   * @throws SandboxException when a process survived or the cgroup or directory could not be
   *     removed
   */
  void run(Marker marker, Freezer freezer, SandboxLayout layout, Duration grace) {
    List<RuntimeException> failures = new ArrayList<>();
    step(failures, () -> stopAgent(marker, freezer, grace));
    step(failures, freezer::killAll);
    step(failures, () -> killLabelled(marker.sandboxId()));
    step(failures, freezer::remove);
    step(failures, () -> CgroupLimits.remove(marker.limitCgroups(), marker.sandboxId()));
    step(failures, () -> deleteDirectory(layout));
    if (!failures.isEmpty()) {
      SandboxException error =
          new SandboxException(
              "Could not completely remove sandbox "
                  + marker.sandboxId()
                  + "; see the control-plane log and retry the delete.",
              Optional.of(marker.sandboxId()),
              failures.get(0));
      failures.stream().skip(1).forEach(error::addSuppressed);
      throw error;
    }
  }

  /**
   * Kills whatever a dead agent left in its sandbox (its commands live on once it is gone, frozen
   * or not), so a restarted agent starts alone; the cgroups and directory stay.
   *
   * @throws IllegalStateException when a process survived SIGKILL
   */
  void killLeftovers(Marker marker, Freezer freezer) {
    if (procFs.isAlive(marker.pid(), marker.startTime())) {
      signals.kill(List.of(marker.pid()));
    }
    freezer.killAll();
    killLabelled(marker.sandboxId());
  }

  private static void step(List<RuntimeException> failures, Runnable step) {
    try {
      step.run();
    } catch (RuntimeException e) {
      failures.add(e);
    }
  }

  private void stopAgent(Marker marker, Freezer freezer, Duration grace) {
    if (grace.isZero() || !procFs.isAlive(marker.pid(), marker.startTime())) {
      return;
    }
    signals.terminate(marker.pid());
    // A frozen agent would only see SIGTERM once thawed; thawing after the signal means it acts on
    // it first thing.
    freezer.thaw();
    Poll.until(() -> !procFs.isAlive(marker.pid(), marker.startTime()), grace);
  }

  private void killLabelled(String sandboxId) {
    List<Long> left = procFs.labelled(sandboxId);
    if (left.isEmpty()) {
      return;
    }
    signals.kill(left);
    if (!Poll.until(() -> procFs.labelled(sandboxId).isEmpty(), GONE)) {
      throw new IllegalStateException(
          "processes of " + sandboxId + " survived SIGKILL: " + procFs.labelled(sandboxId));
    }
  }

  private static void deleteDirectory(SandboxLayout layout) {
    try {
      layout.delete();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete " + layout.root(), e);
    }
  }
}
