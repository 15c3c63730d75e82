package dev.paddock.controlplane;

import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.SandboxAgent;
import dev.paddock.store.SandboxRecord;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Archives the workspace of a sandbox, on request or before a delete, in the mode the operator
 * chose: a required archive that fails is an error the caller must act on (keep the sandbox),
 * otherwise it is logged and the caller goes on.
 */
final class WorkspaceCapture {
  private static final Logger LOG = LoggerFactory.getLogger(WorkspaceCapture.class);

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
    ArchiveSettings settings = context.config().archives();
    String id = record.id();
    try {
      if (record.status() == SandboxStatus.PAUSED) {
        throw new WorkspaceArchiver.ArchiveFailure(
            "it is paused, so its agent cannot send the workspace; resume it first", null);
      }
      if (record.status() != SandboxStatus.RUNNING || record.runtime().isEmpty()) {
        LOG.info("sandbox {} is {}: no workspace to archive", id, record.status());
        return;
      }
      SandboxAgent agent =
          context
              .keys()
              .agent(record.runtime().get())
              .orElseThrow(
                  () -> new WorkspaceArchiver.ArchiveFailure("its agent is not answering", null));
      archiver
          .orElseThrow()
          .capture(new WorkspaceArchiver.Source(id, record.ownerUserId(), conversationId, agent));
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
}
