package dev.paddock.controlplane;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One permit per sandbox id, so lifecycle changes of one sandbox run one at a time in this control
 * plane. A permit is a semaphore, not a lock: {@code start} takes it on the caller's thread and
 * hands it to the start task, which releases it when the runtime is up or has failed. Entries are
 * counted and removed when nobody holds or waits for them, so ids do not accumulate.
 */
final class SandboxPermits {
  private final Map<String, Entry> entries = new ConcurrentHashMap<>();

  /** Waits up to {@code timeout} for the sandbox's permit; empty when it did not come in time. */
  Optional<Permit> acquire(String sandboxId, Duration timeout) {
    Entry entry = retain(sandboxId);
    boolean acquired = false;
    try {
      acquired = entry.semaphore.tryAcquire(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      if (!acquired) {
        release(sandboxId);
      }
    }
    return acquired ? Optional.of(new Permit(this, sandboxId, entry)) : Optional.empty();
  }

  /** The permit if nobody holds it now; never waits. */
  Optional<Permit> tryAcquire(String sandboxId) {
    Entry entry = retain(sandboxId);
    if (entry.semaphore.tryAcquire()) {
      return Optional.of(new Permit(this, sandboxId, entry));
    }
    release(sandboxId);
    return Optional.empty();
  }

  private Entry retain(String sandboxId) {
    return entries.compute(
        sandboxId,
        (id, e) -> {
          Entry entry = e != null ? e : new Entry();
          entry.users++;
          return entry;
        });
  }

  private void release(String sandboxId) {
    entries.computeIfPresent(sandboxId, (id, e) -> --e.users == 0 ? null : e);
  }

  private static final class Entry {
    final Semaphore semaphore = new Semaphore(1);
    // Guarded by the map's per-key compute.
    int users;
  }

  /** A held permit; close it (on any thread) exactly once to let the next caller in. */
  static final class Permit implements AutoCloseable {
    private final SandboxPermits owner;
    private final String sandboxId;
    private final Entry entry;
    private final AtomicBoolean closed = new AtomicBoolean();
    // Set by the holder before the permit is shared (a store claim to clear); run by close.
    private volatile Runnable beforeRelease = () -> {};

    private Permit(SandboxPermits owner, String sandboxId, Entry entry) {
      this.owner = owner;
      this.sandboxId = sandboxId;
      this.entry = entry;
    }

    String sandboxId() {
      return sandboxId;
    }

    /** Runs {@code action} when the permit closes, before the next caller gets it. */
    Permit beforeRelease(Runnable action) {
      this.beforeRelease = action;
      return this;
    }

    @Override
    public void close() {
      if (closed.compareAndSet(false, true)) {
        try {
          beforeRelease.run();
        } finally {
          entry.semaphore.release();
          owner.release(sandboxId);
        }
      }
    }
  }
}
