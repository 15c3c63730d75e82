package dev.paddock.controlplane;

import dev.paddock.api.LifetimeAction;
import dev.paddock.api.spi.RuntimeFailure;
import java.time.Duration;

/**
 * What the control plane reports as it happens (for metrics). Called on the start task's thread;
 * implementations must be quick, thread-safe and must not throw.
 */
public interface SandboxEvents {
  /** No-op listener. */
  SandboxEvents NONE = new SandboxEvents() {};

  /** A sandbox became RUNNING {@code took} after its start began. */
  default void started(String sandboxId, Duration took) {}

  /** A start failed with this class of failure. */
  default void startFailed(String sandboxId, RuntimeFailure.Kind kind) {}

  /**
   * The control plane paused or deleted a sandbox because its lifetime ended ({@code reason} {@code
   * "timeout"}) or it stayed idle ({@code "idle"}). Called on the caller of {@code
   * enforceLifetimes}.
   */
  default void lifetimeEnded(String sandboxId, String reason, LifetimeAction action) {}

  /** A create that waited {@code waited} in the start queue got its slot. */
  default void queueAdmitted(String sandboxId, Duration waited) {}

  /** A create gave up after waiting {@code waited} in the start queue without a slot. */
  default void queueTimedOut(String sandboxId, Duration waited) {}
}
