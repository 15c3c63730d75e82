package dev.paddock.controlplane;

import dev.paddock.api.SandboxException;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.store.SandboxStore;
import java.util.Optional;

/**
 * What every lifecycle operation (start, pause, resume, delete, archive) works with: the store and
 * its optimistic writer, the backend, the settings, the per-sandbox permits, the views of records,
 * the agent keys and the starts under way. Shared, immutable; each part is thread-safe.
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
    LifecycleErrors errors) {

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
