package dev.paddock.agent.user;

/**
 * The agent cannot run commands as the configured user: a start-up error (the CLI exits with code 2
 * and prints the message). Messages name what is missing and what to change.
 */
public final class CommandUserException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  CommandUserException(String message) {
    super(message);
  }

  CommandUserException(String message, Throwable cause) {
    super(message, cause);
  }
}
