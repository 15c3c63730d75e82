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
 *   <li><b>delete</b>: finished. Runtime destroyed, record removed. With archiving on, a delete
 *       that had not begun its teardown may have been cut short while it archived the workspace:
 *       the archive is taken first, as that delete would have; a required archive that fails keeps
 *       the sandbox as it was (frozen again if it was paused), as a delete asked now would.
 * </ul>
 *
 * A runtime that is gone meanwhile makes the sandbox MISSING. The operation is first claimed for
 * this replica (compare-and-set), so of several replicas one takes over; if this one dies too, the
 * next takes over from it.
 */
final class Takeover {
  private static final Logger LOG = LoggerFactory.getLogger(Takeover.class);

  private final LifecycleContext context;
  private final WorkspaceCapture capture;

  Takeover(LifecycleContext context, WorkspaceCapture capture) {
    this.context = context;
    this.capture = capture;
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
    if (!archivedFirst(record)) {
      return;
    }
    Set<RuntimeHandle> all = runtimes(record, listed);
    // The capture may have brought a stopped runtime back under a new handle.
    context.store().find(record.id()).flatMap(SandboxRecord::runtime).ifPresent(all::add);
    all.forEach(context.backend()::destroy);
    if (all.isEmpty()) {
      // A start cut short before it recorded its runtime may have left a bare directory or cgroup.
      context.backend().reclaim(record.id());
    }
    context.store().delete(record.id());
    context.views().forget(record.id());
  }

  /**
   * Whether the delete may go on: it had begun its teardown (which comes after the archive), or
   * archiving is off, or the workspace is archived now (a capture that is not required and fails is
   * logged and the delete goes on, as in {@link SandboxDeleter}).
   */
  private boolean archivedFirst(SandboxRecord record) {
    if (!capture.enabled() || StartFailures.deleting(record.statusDetail(), record.id())) {
      return true;
    }
    try {
      capture.captureBeforeDelete(record);
      return true;
    } catch (WorkspaceArchiver.ArchiveFailure e) {
      keptAsItWas(record.id(), record.status());
      return false;
    }
  }

  /** Ends the delete's claim; a paused sandbox the capture woke is frozen again. */
  private void keptAsItWas(String id, SandboxStatus status) {
    LOG.warn("sandbox {}: its interrupted delete is not finished: the required archive failed", id);
    if (status == SandboxStatus.PAUSED) {
      context.store().find(id).flatMap(SandboxRecord::runtime).ifPresent(context.backend()::pause);
    }
    context.records().change(id, r -> context.claims().ended(r));
  }

  /** The recorded runtime and the listed one, when they differ (a resume may have moved it). */
  private static Set<RuntimeHandle> runtimes(SandboxRecord record, Optional<RuntimeHandle> listed) {
    Set<RuntimeHandle> all = new LinkedHashSet<>();
    record.runtime().ifPresent(all::add);
    listed.ifPresent(all::add);
    return all;
  }
}
