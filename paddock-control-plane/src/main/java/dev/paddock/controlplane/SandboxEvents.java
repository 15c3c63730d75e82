package dev.paddock.controlplane;

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
}
