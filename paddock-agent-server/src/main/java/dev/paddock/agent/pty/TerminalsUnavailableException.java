package dev.paddock.agent.pty;

/** Terminals cannot run in this agent (old JDK, not Linux, native calls refused); answered 501. */
public final class TerminalsUnavailableException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  TerminalsUnavailableException(String message) {
    super(message);
  }

  TerminalsUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
