package dev.paddock.controlplane;

import dev.paddock.api.SandboxException;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.store.SandboxOperation;
import dev.paddock.store.SandboxStore;
import java.util.Optional;

/**
 * What every lifecycle operation (start, pause, resume, delete, archive) works with: the store and
 * its optimistic writer, the backend, the settings, the per-sandbox permits, the views of records,
 * the agent keys, the starts under way and the store claims that serialise replicas. Shared,
 * immutable; each part is thread-safe.
 */
record LifecycleContext(
    SandboxStore store,
    SandboxBackend backend,
    ControlPlaneConfig config,
    SandboxPermits permits,
    SandboxRecords records,
    SandboxViews views,
    AgentKeys keys,
    InFlight inFlight,
    LifecycleErrors errors,
    OperationClaims claims) {

  /**
   * Waits for the sandbox's permit, then for the store claim of {@code kind} (other replicas'
   * operations end first); closing the permit clears the claim. When the sandbox is gone the permit
   * comes without a claim and the caller finds no record.
   */
  SandboxPermits.Permit awaitClaim(String id, SandboxOperation.Kind kind, String what) {
    SandboxPermits.Permit permit = awaitPermit(id, what);
    try {
      claims.await(id, kind, what);
    } catch (RuntimeException e) {
      permit.close();
      throw e;
    }
    return permit.beforeRelease(() -> claims.release(id));
  }

  /** Waits up to the start timeout for the sandbox's permit; fails saying it is busy. */
  SandboxPermits.Permit awaitPermit(String id, String what) {
    return permits
        .acquire(id, config.startTimeout())
        .orElseThrow(
            () ->
                new SandboxException(
                    "sandbox "
                        + id
                        + " is busy (still starting or changing) and could not be "
                        + what
                        + " now; try again",
                    Optional.of(id)));
  }
}
