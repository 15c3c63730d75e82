package dev.paddock.api;

import java.util.Optional;

/**
 * A sandbox failed to start. The message is short and safe and ends with {@code (reference: <id>)};
 * the runtime's raw detail is only in the control plane's log under that reference. {@link
 * #unavailable()} when it failed because the runtime could not be reached right now (the container
 * engine down): the REST API answers that 503, any other start failure 500.
 */
public final class SandboxStartException extends SandboxException {
  private static final long serialVersionUID = 1L;

  private final boolean unavailable;

  public SandboxStartException(String safeMessage, String sandboxId) {
    this(safeMessage, sandboxId, false);
  }

  /** As above; {@code unavailable} when the runtime could not be reached (a retry may succeed). */
  public SandboxStartException(String safeMessage, String sandboxId, boolean unavailable) {
    super(safeMessage + " (reference: " + sandboxId + ")", Optional.of(sandboxId));
    this.unavailable = unavailable;
  }

  /** Whether the runtime could not be reached right now, rather than refused the sandbox. */
  public boolean unavailable() {
    return unavailable;
  }
}
