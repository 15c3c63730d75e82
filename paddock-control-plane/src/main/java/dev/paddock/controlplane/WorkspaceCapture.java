package dev.paddock.controlplane;

import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.SandboxAgent;
import dev.paddock.store.SandboxRecord;
import java.util.EnumSet;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Archives the workspace of a sandbox, on request or before a delete, in the mode the operator
 * chose: a required archive that fails is an error the caller must act on (keep the sandbox),
 * otherwise it is logged and the caller goes on.
 */
final class WorkspaceCapture {
  private static final Logger LOG = LoggerFactory.getLogger(WorkspaceCapture.class);

  /** The statuses in which a runtime may still hold the sandbox's files. */
  private static final Set<SandboxStatus> HOLDS_FILES =
      EnumSet.of(SandboxStatus.RUNNING, SandboxStatus.PAUSED, SandboxStatus.ERROR);

  private final LifecycleContext context;
  private final Optional<WorkspaceArchiver> archiver;

  WorkspaceCapture(LifecycleContext context, Optional<WorkspaceArchiver> archiver) {
    this.context = context;
    this.archiver = archiver;
  }

  boolean enabled() {
    return archiver.isPresent();
  }

  /**
   * Archives the workspace of a sandbox the caller may see (a no-op when archiving is off).
   *
   * @return false only when archiving is required and failed
   */
  boolean archive(String id, Optional<String> conversationId) {
    if (archiver.isEmpty()) {
      return true;
    }
    try (SandboxPermits.Permit permit = context.awaitPermit(id, "archived")) {
      SandboxRecord record =
          context.store().find(permit.sandboxId()).orElseThrow(() -> LifecycleErrors.notFound(id));
      captureHeld(record, conversationId);
      return true;
    } catch (WorkspaceArchiver.ArchiveFailure e) {
      return false;
    }
  }

  /**
   * Captures the workspace of a RUNNING sandbox whose permit the caller holds. A paused runtime
   * cannot answer: in required mode that is a failure (resume it first), otherwise it is logged.
   * Other states have no workspace to reach and are skipped.
   *
   * @throws WorkspaceArchiver.ArchiveFailure only when archiving is required
   */
  void captureHeld(SandboxRecord record, Optional<String> conversationId) {
    capture(record, conversationId, false);
  }

  /**
   * Captures the workspace before a delete. A runtime that still exists but cannot answer (paused,
   * or stopped by a kill, a crash or the OOM killer: its workspace is still on disk) is brought
   * back first, with no session key, so its agent can send the workspace; the delete removes it
   * next. In required mode a runtime that cannot be brought back blocks the delete.
   *
   * @throws WorkspaceArchiver.ArchiveFailure only when archiving is required
   */
  void captureBeforeDelete(SandboxRecord record) {
    capture(record, Optional.empty(), true);
  }

  private void capture(SandboxRecord record, Optional<String> conversationId, boolean wake) {
    ArchiveSettings settings = context.config().archives();
    String id = record.id();
    try {
      Optional<SandboxAgent> agent = reachable(record, wake);
      if (agent.isEmpty()) {
        LOG.info("sandbox {} is {}: no workspace to archive", id, record.status());
        return;
      }
      archiver
          .orElseThrow()
          .capture(
              new WorkspaceArchiver.Source(id, record.ownerUserId(), conversationId, agent.get()));
      context.config().events().archived(id);
    } catch (WorkspaceArchiver.ArchiveFailure e) {
      LOG.warn(
          "sandbox {}: archiving its workspace failed{}: {}",
          id,
          settings.required() ? "" : " (not required, going on)",
          e.getMessage(),
          e);
      if (settings.required()) {
        throw e;
      }
    }
  }

  /** The agent to archive from; empty when the sandbox has no runtime that could hold files. */
  private Optional<SandboxAgent> reachable(SandboxRecord record, boolean wake) {
    if (record.runtime().isEmpty() || !HOLDS_FILES.contains(record.status())) {
      return Optional.empty();
    }
    RuntimeHandle handle = record.runtime().get();
    if (record.status() != SandboxStatus.PAUSED) {
      Optional<SandboxAgent> agent = context.keys().agent(handle);
      if (agent.isPresent()) {
        return agent;
      }
    }
    if (!wake) {
      throw new WorkspaceArchiver.ArchiveFailure(
          record.status() == SandboxStatus.PAUSED
              ? "it is paused, so its agent cannot send the workspace; resume it first"
              : "its agent is not answering",
          null);
    }
    if (context.views().inspect(handle, record.status()).status() == SandboxStatus.MISSING) {
      return Optional.empty(); // nothing left that holds its files
    }
    return Optional.of(woken(record.id(), handle));
  }

  /**
   * An agent that takes its key at launch only comes back with the key of a new generation that is
   * never issued (the store keeps no hash of it): no earlier key works on it, and nobody but the
   * control plane holds this one.
   */
  private RuntimeHandle relaunchedUnissued(String id, RuntimeHandle handle) {
    SandboxRecord record =
        context
            .records()
            .change(id, r -> r.withKey(r.keyGeneration() + 1, Optional.empty()))
            .orElseThrow(() -> new WorkspaceArchiver.ArchiveFailure("its record is gone", null));
    return context
        .backend()
        .relaunch(handle, context.keys().sessionKey(id, record.keyGeneration()));
  }

  private SandboxAgent woken(String id, RuntimeHandle handle) {
    RuntimeHandle up;
    try {
      up = handle.launchKeyed() ? relaunchedUnissued(id, handle) : context.backend().resume(handle);
    } catch (RuntimeException e) {
      throw new WorkspaceArchiver.ArchiveFailure(
          "its runtime stopped and could not be brought back to send the workspace", e);
    }
    LOG.info("sandbox {}: runtime brought back (without a session key) to archive it", id);
    context.records().change(id, r -> r.withRuntime(Optional.of(up)));
    return context
        .keys()
        .agent(up)
        .orElseThrow(
            () -> new WorkspaceArchiver.ArchiveFailure("its agent is not answering", null));
  }
}
