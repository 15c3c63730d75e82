package dev.paddock.api;

import java.util.Optional;

/**
 * An operation that needs a RUNNING sandbox was asked of one in another state (the REST API answers
 * 409). The message names the state the sandbox is in.
 */
public class SandboxNotRunningException extends SandboxException {
  private static final long serialVersionUID = 1L;

  private final SandboxStatus status;

  public SandboxNotRunningException(String sandboxId, SandboxStatus status, String what) {
    super(
        "sandbox " + sandboxId + " is " + status + ", not RUNNING: " + what,
        Optional.of(sandboxId));
    this.status = status;
  }

  /** The state the sandbox was in. */
  public SandboxStatus status() {
    return status;
  }
}
