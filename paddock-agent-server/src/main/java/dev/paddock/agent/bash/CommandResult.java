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
 */
public record CommandResult(
    int exitCode,
    boolean timedOut,
    boolean stdoutTruncated,
    boolean stderrTruncated,
    Optional<String> error,
    boolean sessionReset,
    long durationMillis) {}
