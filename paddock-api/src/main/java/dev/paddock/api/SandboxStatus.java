package dev.paddock.api;

/** Where a sandbox is in its life, always derived from the real runtime, never guessed. */
public enum SandboxStatus {
  /** Created; the runtime is starting or the agent is not answering yet. */
  STARTING,
  /** The runtime is up and its agent-server answers; the session key works. */
  RUNNING,
  /** Every process is frozen; the session key is revoked until resume issues a new one. */
  PAUSED,
  /** The runtime failed (exited, OOM-killed, never became ready); see the status detail. */
  ERROR,
  /** The control plane knows the sandbox but its runtime is gone. */
  MISSING
}
