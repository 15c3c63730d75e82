package dev.paddock.agent.bash;

/**
 * Makes command processes, rather than the agent, the kernel OOM killer's first choice when the
 * sandbox runs out of memory. Every shell the agent starts for commands (the fork server's zygote,
 * session shells, cold commands) runs {@link #PREFER_THIS_SHELL} before any user code; its children
 * inherit the score. Raising one's own {@code oom_score_adj} needs no privilege, so it works for an
 * unprivileged {@code --run-as} user too; where {@code /proc} is missing it silently does nothing.
 */
final class OomScore {
  /**
   * A shell command setting the shell's own {@code oom_score_adj} to 1000 (the maximum), quietly:
   * stderr is redirected before the file is opened, so a refused write prints nothing.
   */
  static final String PREFER_THIS_SHELL = "echo 1000 2>/dev/null >/proc/self/oom_score_adj";

  private OomScore() {}
}
