package dev.paddock.controlplane;

import dev.paddock.api.SandboxException;
import dev.paddock.store.ConflictException;
import dev.paddock.store.SandboxOperation;
import dev.paddock.store.SandboxRecord;
import dev.paddock.store.SandboxStore;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The store's half of a sandbox's permit: the operation under way, written into the record with
 * this replica's id ({@link SandboxRecord#operation()}), so that the replicas sharing the store
 * change one sandbox one at a time, and a replica that dies mid-operation leaves a mark that the
 * {@link Takeover} finishes or undoes.
 *
 * <p>A claim is taken by compare-and-set when no operation is under way, or when the one under way
 * is this replica's own (left behind by a release that failed: the caller holds this process's
 * permit, so nothing here is doing it). Another replica's operation, live or dead, is waited for: a
 * live one ends by itself, a dead one is taken over by the background work within a lease and a
 * reconcile interval.
 */
final class OperationClaims {
  private static final long FIRST_WAIT = TimeUnit.MILLISECONDS.toNanos(20);
  private static final long LONGEST_WAIT = TimeUnit.MILLISECONDS.toNanos(500);

  private final SandboxStore store;
  private final String replicaId;
  private final ControlPlaneConfig config;

  OperationClaims(SandboxStore store, ControlPlaneConfig config) {
    this.store = store;
    this.replicaId = config.replicaId();
    this.config = config;
  }

  String replicaId() {
    return replicaId;
  }

  /** The operation {@code kind} by this replica. */
  SandboxOperation mine(SandboxOperation.Kind kind) {
    return new SandboxOperation(kind, replicaId);
  }

  /**
   * Marks {@code kind} under way by this replica, waiting up to the start timeout while another
   * replica has an operation under way; empty when the sandbox is gone.
   *
   * @throws SandboxException when the other operation did not end in time
   */
  Optional<SandboxRecord> await(String id, SandboxOperation.Kind kind, String what) {
    long deadline = System.nanoTime() + config.startTimeout().toNanos();
    long wait = FIRST_WAIT;
    while (true) {
      Optional<SandboxRecord> current = store.find(id);
      if (current.isEmpty()) {
        return current;
      }
      Optional<SandboxRecord> claimed = tryClaim(current.get(), kind);
      if (claimed.isPresent()) {
        return claimed;
      }
      long left = deadline - System.nanoTime();
      if (left <= 0 || Thread.currentThread().isInterrupted()) {
        throw busy(id, what, current.get());
      }
      LockSupport.parkNanos(Math.min(wait, left));
      wait = Math.min(wait * 2, LONGEST_WAIT);
    }
  }

  /** Claims {@code record} for {@code kind} if no other replica has an operation under way. */
  Optional<SandboxRecord> tryClaim(SandboxRecord record, SandboxOperation.Kind kind) {
    if (record.operation().isPresent() && !isMine(record.operation().get())) {
      return Optional.empty();
    }
    try {
      return Optional.of(store.update(record.withOperation(Optional.of(mine(kind)))));
    } catch (ConflictException e) {
      return Optional.empty(); // changed meanwhile: read again
    }
  }

  /** Clears this replica's operation on the sandbox, if it is still marked; never throws. */
  void release(String id) {
    for (int attempt = 0; attempt < 10; attempt++) {
      try {
        Optional<SandboxRecord> current = store.find(id);
        if (current.isEmpty() || current.get().operation().filter(this::isMine).isEmpty()) {
          return;
        }
        store.update(current.get().withOperation(Optional.empty()));
        return;
      } catch (ConflictException e) {
        // Changed meanwhile: read again.
      } catch (RuntimeException e) {
        // The mark stays: this replica's next claim or the take-over after its death clears it.
        return;
      }
    }
  }

  /** The record without this replica's operation (for a change that ends the operation). */
  SandboxRecord ended(SandboxRecord record) {
    return record.operation().filter(this::isMine).isPresent()
        ? record.withOperation(Optional.empty())
        : record;
  }

  boolean isMine(SandboxOperation operation) {
    return operation.replicaId().equals(replicaId);
  }

  private static SandboxException busy(String id, String what, SandboxRecord record) {
    String doing =
        record
            .operation()
            .map(o -> " (" + o.kind().name().toLowerCase(java.util.Locale.ROOT) + " under way)")
            .orElse("");
    return new SandboxException(
        "sandbox "
            + id
            + " is busy"
            + doing
            + " in another control-plane replica and could not be "
            + what
            + " now; try again",
        Optional.of(id));
  }
}
