package dev.paddock.agent.bash;

import java.util.Optional;

/**
 * How a command ended.
 *
 * @param exitCode the exit status; -1 when it timed out or could not be started (as OpenHands)
 * @param timedOut the command ran past its timeout and its process tree was killed
 * @param stdoutTruncated stdout passed the output cap and was cut there
 * @param stderrTruncated stderr passed the output cap and was cut there
 * @param error why the command could not run at all, if it could not
 * @param sessionReset the persistent shell it ran in had to be restarted (state lost)
 * @param durationMillis wall time from start to end
 * @param oomKilled the kernel OOM killer ended it: it died of SIGKILL (exit code 137) while the
 *     agent's cgroup counted an OOM kill; false when that count is unreadable
 */
public record CommandResult(
    int exitCode,
    boolean timedOut,
    boolean stdoutTruncated,
    boolean stderrTruncated,
    Optional<String> error,
    boolean sessionReset,
    long durationMillis,
    boolean oomKilled) {

  /** What the error says, and a line added to stderr, when a command was OOM-killed. */
  public static final String OOM_MESSAGE = "killed: out of memory (the sandbox's memory limit)";

  /** Exit status of a process killed by SIGKILL, as shells and Java report it. */
  static final int SIGKILL_EXIT = 128 + 9;

  /** A result for a command that never ran. */
  static CommandResult notRun(String reason, long durationMillis) {
    return new CommandResult(
        -1, false, false, false, Optional.of(reason), false, durationMillis, false);
  }
}
