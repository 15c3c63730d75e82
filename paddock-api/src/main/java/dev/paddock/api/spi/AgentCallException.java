package dev.paddock.api.spi;

/**
 * A call to a sandbox's agent (through {@link SandboxAgent}) failed: unreachable, refused, or
 * answered an error. The message is for the log (it may name the agent's address), never for users.
 */
public final class AgentCallException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public AgentCallException(String message) {
    super(message);
  }

  public AgentCallException(String message, Throwable cause) {
    super(message, cause);
  }
}
