package dev.paddock.server.gateway;

/**
 * Resumes a paused sandbox for the gateway's auto-resume (a sandbox created with {@code
 * auto_resume}), as the control plane's own resume does: same workspace, new session key.
 * Implementations must be thread-safe; the gateway calls it at most once at a time per sandbox.
 */
@FunctionalInterface
public interface SandboxResumer {
  /** A resumer for a control plane without auto-resume: every call fails. */
  SandboxResumer NONE =
      sandboxId -> {
        throw new IllegalStateException("auto-resume is not available on this control plane");
      };

  /**
   * Resumes {@code sandboxId} and returns once it is RUNNING and its agent answers.
   *
   * @throws RuntimeException when it could not be resumed (the message is shown to the client,
   *     except a {@code StoreException}'s, which may name the database)
   */
  void resume(String sandboxId);
}
