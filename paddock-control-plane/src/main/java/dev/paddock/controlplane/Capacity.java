package dev.paddock.controlplane;

import dev.paddock.api.CapacityExceededException;
import dev.paddock.api.SandboxStatus;
import dev.paddock.store.SandboxRecord;
import dev.paddock.store.SandboxStore;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * Admission of starts and resumes. A sandbox counts against the limits while STARTING or RUNNING.
 * The check and the write that makes the new sandbox count (insert STARTING, or mark a resuming
 * sandbox STARTING) happen under one lock, so two admissions cannot both take the last place. Past
 * a limit it either refuses with a message naming the limit, or, when the operator chose "pause the
 * oldest", pauses the oldest RUNNING sandbox (the owner's own for the per-user limit).
 *
 * <p>Lock order: a sandbox's own permit, then this lock, then (try only) another sandbox's permit
 * inside {@code pauseVictim}; never the other way round.
 */
final class Capacity {
  private static final EnumSet<SandboxStatus> ACTIVE =
      EnumSet.of(SandboxStatus.STARTING, SandboxStatus.RUNNING);

  private final SandboxStore store;
  private final ControlPlaneConfig config;
  private final Predicate<SandboxRecord> pauseVictim;
  private final ReentrantLock admission = new ReentrantLock();

  /**
   * @param pauseVictim pauses a RUNNING sandbox if nobody else is changing it; true when paused
   */
  Capacity(SandboxStore store, ControlPlaneConfig config, Predicate<SandboxRecord> pauseVictim) {
    this.store = store;
    this.config = config;
    this.pauseVictim = pauseVictim;
  }

  /**
   * Makes room for one more sandbox of {@code owner} (not counting {@code sandboxId} itself), then
   * runs {@code reserve} under the admission lock and returns its result.
   *
   * @throws CapacityExceededException past a limit, when nothing could (or may) be paused
   */
  <T> T admit(Optional<String> owner, String sandboxId, Supplier<T> reserve) {
    admission.lock();
    try {
      makeRoom(active(sandboxId), config.maxSandboxes(), "on this control plane");
      makeRoom(
          active(sandboxId).stream().filter(r -> r.ownerUserId().equals(owner)).toList(),
          config.maxSandboxesPerUser(),
          "per user");
      return reserve.get();
    } finally {
      admission.unlock();
    }
  }

  private List<SandboxRecord> active(String exceptId) {
    return store.withStatus(ACTIVE).stream().filter(r -> !r.id().equals(exceptId)).toList();
  }

  private void makeRoom(List<SandboxRecord> counted, int max, String scope) {
    int count = counted.size();
    if (count < max) {
      return;
    }
    if (!config.pauseOldest()) {
      throw atCapacity(count, max, scope, "pause or delete one and try again");
    }
    List<SandboxRecord> oldestFirst =
        counted.stream()
            .filter(r -> r.status() == SandboxStatus.RUNNING)
            .sorted(Comparator.comparing(SandboxRecord::createdAt).thenComparing(SandboxRecord::id))
            .toList();
    for (SandboxRecord victim : oldestFirst) {
      if (count < max) {
        return;
      }
      if (pauseVictim.test(victim)) {
        count--;
      }
    }
    if (count >= max) {
      throw atCapacity(count, max, scope, "no running sandbox could be paused; try again later");
    }
  }

  private static CapacityExceededException atCapacity(
      int count, int max, String scope, String next) {
    return new CapacityExceededException(
        "at capacity: "
            + count
            + " running sandbox"
            + (count == 1 ? "" : "es")
            + " "
            + scope
            + " (max "
            + max
            + "); "
            + next);
  }
}
