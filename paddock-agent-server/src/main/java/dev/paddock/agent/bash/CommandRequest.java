package dev.paddock.agent.bash;

import java.util.Map;
import java.util.Optional;

/**
 * What to run.
 *
 * @param command shell text, run by bash
 * @param cwd working directory (absolute, or relative to the workspace); default the workspace
 * @param timeoutSeconds after this the whole process tree is killed and the result says so
 * @param session name of a persistent shell to run in; empty for a fresh process
 * @param stdin keep stdin open for {@code POST .../stdin} (one-shot commands only)
 * @param env extra environment variables (one-shot commands only)
 */
public record CommandRequest(
    String command,
    Optional<String> cwd,
    long timeoutSeconds,
    Optional<String> session,
    boolean stdin,
    Map<String, String> env) {
  public CommandRequest {
    env = Map.copyOf(env);
  }
}
