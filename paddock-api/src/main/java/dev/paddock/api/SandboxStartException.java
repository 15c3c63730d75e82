package dev.paddock.api;

import java.util.Optional;

/**
 * A sandbox failed to start. The message is short and safe and ends with {@code (reference: <id>)};
 * the runtime's raw detail is only in the control plane's log under that reference.
 */
public final class SandboxStartException extends SandboxException {
  private static final long serialVersionUID = 1L;

  public SandboxStartException(String safeMessage, String sandboxId) {
    super(safeMessage + " (reference: " + sandboxId + ")", Optional.of(sandboxId));
  }
}
