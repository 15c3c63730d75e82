package dev.paddock.controlplane;

import dev.paddock.api.LifetimeAction;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeHandle;
import java.time.Duration;
import java.util.List;

/**
 * What the control plane reports as it happens (for metrics and the kept logs). Called on the
 * thread doing the change (the start task's, the caller's, the lifetime pass's); implementations
 * must be quick, thread-safe and must not throw.
 */
public interface SandboxEvents {
  /** No-op listener. */
  SandboxEvents NONE = new SandboxEvents() {};

  /** A start was accepted: the sandbox exists, STARTING. */
  default void created(SandboxInfo sandbox) {}

  /** A sandbox became RUNNING {@code took} after its start began. */
  default void started(String sandboxId, Duration took) {}

  /** A start failed with this class of failure. */
  default void startFailed(String sandboxId, RuntimeFailure.Kind kind) {}

  /** A sandbox was paused (by its owner, an admin, or its lifetime). */
  default void paused(String sandboxId) {}

  /** A sandbox was resumed and runs again. */
  default void resumed(String sandboxId) {}

  /** Its workspace was archived (on request, or before its delete). */
  default void archived(String sandboxId) {}

  /**
   * A delete is about to tear down {@code runtime}: the last moment its agent's log can be read.
   * Called before the teardown, also when the delete then fails.
   */
  default void deleting(String sandboxId, RuntimeHandle runtime) {}

  /** A sandbox's runtime and record were removed. */
  default void deleted(String sandboxId) {}

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

  /** Tells each of {@code listeners} every event, in order. */
  static SandboxEvents fanOut(SandboxEvents... listeners) {
    return new EventFanOut(List.of(listeners));
  }
}
