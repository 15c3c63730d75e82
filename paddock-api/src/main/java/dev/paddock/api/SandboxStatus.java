package dev.paddock.api;

/** Where a sandbox is in its life, always derived from the real runtime, never guessed. */
public enum SandboxStatus {
  /**
   * Waiting in the start queue for a slot (a create with a queue timeout, past capacity); no
   * runtime and no key yet. Shown on the OpenHands wire as STARTING with a {@code queue} object,
   * because OpenHands' status enum has no such value.
   */
  QUEUED,
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
