package dev.paddock.controlplane;

import static dev.paddock.controlplane.LifecycleErrors.none;

import dev.paddock.api.SandboxException;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.store.SandboxOperation;
import dev.paddock.store.SandboxRecord;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pauses sandboxes, on request or to make room (pause-oldest). Order: revoke the key in the store
 * (its generation advances, so the derived key is never valid again), revoke it at the agent (best
 * effort), freeze, record PAUSED.
 */
final class SandboxPauser {
  private static final Logger LOG = LoggerFactory.getLogger(SandboxPauser.class);

  private final LifecycleContext context;

  SandboxPauser(LifecycleContext context) {
    this.context = context;
  }

  /** Pauses a sandbox the caller may see. Idempotent: PAUSED stays PAUSED. */
  void pause(String id) {
    try (SandboxPermits.Permit permit =
        context.awaitClaim(id, SandboxOperation.Kind.PAUSE, "paused")) {
      Optional<SandboxRecord> current = context.store().find(permit.sandboxId());
      if (current.isEmpty() || current.get().status() == SandboxStatus.PAUSED) {
        return;
      }
      pauseHeld(LifecycleErrors.requireStatus(current.get(), SandboxStatus.RUNNING, "paused"));
    }
  }

  /** Pauses a RUNNING sandbox to make room, if nobody is changing it; true when it is paused. */
  boolean pauseVictim(SandboxRecord candidate) {
    Optional<SandboxPermits.Permit> permit = context.permits().tryAcquire(candidate.id());
    if (permit.isEmpty()) {
      return false;
    }
    try (SandboxPermits.Permit held = permit.get()) {
      Optional<SandboxRecord> current =
          context
              .store()
              .find(held.sandboxId())
              .flatMap(r -> context.claims().tryClaim(r, SandboxOperation.Kind.PAUSE));
      if (current.isEmpty()) {
        return false; // gone, or changing in another replica
      }
      held.beforeRelease(() -> context.claims().release(candidate.id()));
      if (current.get().status() != SandboxStatus.RUNNING) {
        return false;
      }
      pauseHeld(current.get());
      LOG.info("paused sandbox {} to make room (pause-oldest is on)", candidate.id());
      return true;
    } catch (RuntimeException e) {
      LOG.warn("cannot pause sandbox {} to make room", candidate.id(), e);
      return false;
    }
  }

  /**
   * The backend's reason, when it gave one meant for users (a {@link SandboxException}'s message:
   * "The container engine cannot be reached right now."); nothing for any other failure, whose
   * message may carry the runtime's internals (it is in the log).
   */
  private static String why(RuntimeException e) {
    return e instanceof SandboxException safe ? " (" + safe.getMessage() + ")" : "";
  }

  /** Pauses a RUNNING sandbox whose permit the caller holds. */
  void pauseHeld(SandboxRecord record) {
    String id = record.id();
    context.records().change(id, r -> r.withKey(r.keyGeneration() + 1, none()));
    RuntimeHandle handle = LifecycleErrors.requireRuntime(record);
    if (!handle.launchKeyed()) {
      // A launch-keyed agent cannot drop its key: the backend stops it instead.
      context.keys().revokeAtAgent(handle);
    }
    try {
      context.backend().pause(handle);
    } catch (RuntimeException e) {
      throw new SandboxException(
          "could not pause sandbox "
              + id
              + why(e)
              + "; its session key is revoked; try pausing again",
          Optional.of(id),
          e);
    }
    context
        .records()
        .change(id, r -> context.claims().ended(r).withStatus(SandboxStatus.PAUSED, none()));
  }
}
