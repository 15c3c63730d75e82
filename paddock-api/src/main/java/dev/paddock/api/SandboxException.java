package dev.paddock.api;

import java.util.Optional;

/**
 * Base of Paddock's unchecked exceptions. Messages are safe to show to the caller: they say what
 * failed, on what, and what to do next; raw runtime detail goes to the log only.
 */
public class SandboxException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  private final transient Optional<String> sandboxId;

  public SandboxException(String message, Optional<String> sandboxId) {
    super(message);
    this.sandboxId = sandboxId;
  }

  public SandboxException(String message, Optional<String> sandboxId, Throwable cause) {
    super(message, cause);
    this.sandboxId = sandboxId;
  }

  public Optional<String> sandboxId() {
    return sandboxId;
  }
}
