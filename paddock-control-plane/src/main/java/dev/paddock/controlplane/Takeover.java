package dev.paddock.controlplane;

import static dev.paddock.controlplane.LifecycleErrors.none;

import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.store.ConflictException;
import dev.paddock.store.SandboxOperation;
import dev.paddock.store.SandboxRecord;
import java.util.LinkedHashSet;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finishes or undoes an operation that a gone replica (its heartbeat lapsed) left on a sandbox, so
 * a replica killed mid-operation leaves nothing behind:
 *
 * <ul>
 *   <li><b>start</b>: undone. Its runtime (if the backend made one) is destroyed and the sandbox is
 *       ERROR with its key revoked; the caller that asked for it has lost its answer anyway.
 *   <li><b>pause</b>: finished. The key was revoked before the freeze, so the runtime is frozen
 *       (idempotent) and the sandbox PAUSED.
 *   <li><b>resume</b>: undone. The new key may not have reached the agent or the store, so the
 *       runtime is frozen again and the sandbox PAUSED with no key; resuming it again works.
 *   <li><b>delete</b>: finished. Runtime destroyed, record removed.
 * </ul>
 *
 * A runtime that is gone meanwhile makes the sandbox MISSING. The operation is first claimed for
 * this replica (compare-and-set), so of several replicas one takes over; if this one dies too, the
 * next takes over from it.
 */
final class Takeover {
  private static final Logger LOG = LoggerFactory.getLogger(Takeover.class);

  private final LifecycleContext context;

  Takeover(LifecycleContext context) {
    this.context = context;
  }

  /**
   * Takes over {@code record}'s operation; the caller holds the sandbox's permit. {@code listed} is
   * the runtime the backend listed for it, if any. Returns false when another replica changed the
   * record first.
   */
  boolean takeOver(SandboxRecord record, Optional<RuntimeHandle> listed) {
    SandboxOperation left = record.operation().orElseThrow();
    Optional<SandboxRecord> claimed = claim(record, left.kind());
    if (claimed.isEmpty()) {
      return false;
    }
    LOG.warn(
        "sandbox {}: replica {} left its {} unfinished; replica {} takes it over",
        record.id(),
        left.replicaId(),
        left.kind(),
        context.claims().replicaId());
    switch (left.kind()) {
      case START -> undoStart(claimed.get(), listed, ownRestart(left));
      case PAUSE, RESUME -> pauseAgain(claimed.get(), listed);
      case DELETE -> finishDelete(claimed.get(), listed);
    }
    return true;
  }

  private Optional<SandboxRecord> claim(SandboxRecord record, SandboxOperation.Kind kind) {
    try {
      return Optional.of(
          context.store().update(record.withOperation(Optional.of(context.claims().mine(kind)))));
    } catch (ConflictException e) {
      return Optional.empty();
    }
  }

  /** Whether {@code left} is this replica's own, from before it restarted (same replica id). */
  private boolean ownRestart(SandboxOperation left) {
    return left.replicaId().equals(context.claims().replicaId());
  }

  private void undoStart(
      SandboxRecord record, Optional<RuntimeHandle> listed, boolean interruptedByRestart) {
    String why = interruptedByRestart ? StartFailures.INTERRUPTED : StartFailures.ABANDONED;
    runtimes(record, listed).forEach(context.backend()::destroy);
    context
        .records()
        .change(
            record.id(),
            r ->
                context
                    .claims()
                    .ended(r)
                    .withSessionKeyHash(none())
                    .withStatus(
                        SandboxStatus.ERROR, Optional.of(StartFailures.detail(why, record.id()))));
  }

  private void pauseAgain(SandboxRecord record, Optional<RuntimeHandle> listed) {
    Optional<RuntimeHandle> handle = listed.or(record::runtime);
    boolean gone =
        handle.isEmpty()
            || context.views().inspect(handle.get(), record.status()).status()
                == SandboxStatus.MISSING;
    if (!gone) {
      context.backend().pause(handle.get());
    }
    SandboxStatus status = gone ? SandboxStatus.MISSING : SandboxStatus.PAUSED;
    Optional<String> detail =
        gone ? Optional.of(StartFailures.detail(StartFailures.GONE, record.id())) : none();
    context
        .records()
        .change(
            record.id(),
            r ->
                context
                    .claims()
                    .ended(r)
                    .withRuntime(handle.or(r::runtime))
                    .withKey(r.keyGeneration() + 1, none())
                    .withStatus(status, detail));
  }

  private void finishDelete(SandboxRecord record, Optional<RuntimeHandle> listed) {
    runtimes(record, listed).forEach(context.backend()::destroy);
    context.store().delete(record.id());
    context.views().forget(record.id());
  }

  /** The recorded runtime and the listed one, when they differ (a resume may have moved it). */
  private static Set<RuntimeHandle> runtimes(SandboxRecord record, Optional<RuntimeHandle> listed) {
    Set<RuntimeHandle> all = new LinkedHashSet<>();
    record.runtime().ifPresent(all::add);
    listed.ifPresent(all::add);
    return all;
  }
}
