package dev.paddock.controlplane;

import static dev.paddock.controlplane.LifecycleErrors.none;

import dev.paddock.api.SandboxException;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.store.SandboxOperation;
import dev.paddock.store.SandboxRecord;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Deletes sandboxes: revokes the key and claims the delete (one write, committed first, so the key
 * is revoked even while another operation holds the sandbox), records that the teardown began, then
 * tears down the runtime and removes the record; a delete cut short by a crash is finished by the
 * next reconcile ({@link #finishInterrupted}). With archiving on, the workspace is archived first,
 * under the permit and with the key still valid, so a required archive that fails leaves the
 * sandbox exactly as it was.
 */
final class SandboxDeleter {
  private static final Logger LOG = LoggerFactory.getLogger(SandboxDeleter.class);

  private final LifecycleContext context;
  private final WorkspaceCapture capture;

  SandboxDeleter(LifecycleContext context, WorkspaceCapture capture) {
    this.context = context;
    this.capture = capture;
  }

  void delete(String id) {
    if (capture.enabled()) {
      deleteArchived(id);
      return;
    }
    if (context.records().change(id, r -> claimedUnlessBusy(revoked(r))).isEmpty()) {
      return;
    }
    try (SandboxPermits.Permit permit =
        context.awaitClaim(id, SandboxOperation.Kind.DELETE, "deleted (its key is revoked)")) {
      deleteHeld(permit.sandboxId());
    }
  }

  private void deleteArchived(String id) {
    try (SandboxPermits.Permit permit =
        context.awaitClaim(id, SandboxOperation.Kind.DELETE, "deleted")) {
      Optional<SandboxRecord> current = context.store().find(permit.sandboxId());
      if (current.isEmpty()) {
        return;
      }
      try {
        capture.captureBeforeDelete(current.get());
      } catch (WorkspaceArchiver.ArchiveFailure e) {
        throw new SandboxException(
            "could not delete sandbox "
                + id
                + ": archiving its workspace failed ("
                + e.getMessage()
                + "); the sandbox is kept as it was; try again",
            Optional.of(id),
            e);
      }
      context.records().change(id, SandboxDeleter::revoked);
      deleteHeld(id);
    }
  }

  /**
   * {@code record} marked as being deleted by this replica, unless another operation is under way:
   * written with the revoke, so a crash right after it leaves a delete the restart finishes (a
   * take-over), never a RUNNING record whose key is revoked in the store while its agent still
   * takes it. An operation under way keeps its own mark, whose take-over settles the sandbox just
   * as truly; this delete claims it once that operation ended.
   */
  private SandboxRecord claimedUnlessBusy(SandboxRecord record) {
    return record.operation().isPresent()
        ? record
        : record.withOperation(Optional.of(context.claims().mine(SandboxOperation.Kind.DELETE)));
  }

  /** The key revoked for good: hash cleared, generation advanced past it. */
  private static SandboxRecord revoked(SandboxRecord record) {
    return record.withKey(record.keyGeneration() + 1, none());
  }

  /**
   * Finishes a delete that began (its record says {@link StartFailures#DELETING}, its key is
   * revoked, its workspace archived if that was on) and was cut short by a control-plane crash. The
   * caller holds the sandbox's permit.
   */
  void finishInterrupted(String id) {
    LOG.info("sandbox {}: finishing the delete an earlier control plane began", id);
    deleteHeld(id);
  }

  private void deleteHeld(String id) {
    Optional<SandboxRecord> current = markKeyless(id, StartFailures.DELETING);
    if (current.isEmpty()) {
      return;
    }
    if (current.get().runtime().isPresent()) {
      tearDown(id, current.get().runtime().get());
    } else {
      unrecordedRuntimes(id).forEach(handle -> tearDown(id, handle));
      reclaim(id);
    }
    context.store().delete(id);
    context.views().forget(id);
  }

  /**
   * A record without a runtime (its start was cut short by a control-plane crash) may still have
   * one the backend made and labelled before the crash: an agent that would otherwise outlive the
   * delete, still taking the create's key, until a reconcile pass reaped it.
   */
  private List<RuntimeHandle> unrecordedRuntimes(String id) {
    return context.backend().list().stream().filter(h -> h.sandboxId().equals(id)).toList();
  }

  /** What is left of a start cut short that the backend lists as no runtime (a bare directory). */
  private void reclaim(String id) {
    try {
      context.backend().reclaim(id);
    } catch (RuntimeException e) {
      LOG.warn("sandbox {}: reclaiming what its interrupted start left failed", id, e);
      throw failedTearDown(id, e);
    }
  }

  private void tearDown(String id, RuntimeHandle handle) {
    try {
      context.keys().revokeAtAgent(handle);
      context.backend().destroy(handle);
    } catch (RuntimeException e) {
      LOG.warn("sandbox {}: tearing down its runtime failed", id, e);
      throw failedTearDown(id, e);
    }
  }

  /** The record ERROR with {@code detail} and no key hash; empty when it is gone. */
  private Optional<SandboxRecord> markKeyless(String id, String detail) {
    return context
        .records()
        .change(
            id,
            r ->
                r.withSessionKeyHash(none())
                    .withStatus(
                        SandboxStatus.ERROR, Optional.of(StartFailures.detail(detail, id))));
  }

  /** Marks the record DELETE_FAILED (its key stays revoked) and says so to the caller. */
  private SandboxException failedTearDown(String id, RuntimeException cause) {
    markKeyless(id, StartFailures.DELETE_FAILED);
    return new SandboxException(
        "could not delete sandbox "
            + id
            + ": tearing down its runtime failed; its session key stays revoked; try again",
        Optional.of(id),
        cause);
  }
}
