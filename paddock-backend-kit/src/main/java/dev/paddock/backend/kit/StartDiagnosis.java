package dev.paddock.backend.kit;

import dev.paddock.api.spi.RuntimeFailure.Kind;
import dev.paddock.api.spi.RuntimeStartException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The classified exceptions of a failed agent start that every backend builds the same way: the
 * agent could not be executed, exited before its ready line (a port clash told from its output),
 * never printed it, or something unexpected happened. Raw detail (the agent's last output lines,
 * paths) is for the log only; users see the kind's safe message.
 */
public final class StartDiagnosis {
  private static final Map<Integer, String> SIGNALS =
      Map.of(1, "SIGHUP", 2, "SIGINT", 6, "SIGABRT", 9, "SIGKILL", 11, "SIGSEGV", 15, "SIGTERM");

  private StartDiagnosis() {}

  /** BINARY_MISSING: {@code program} could not be executed. */
  public static RuntimeStartException binaryMissing(String program, Throwable cause) {
    return RuntimeStartException.of(
        Kind.BINARY_MISSING, "cannot execute " + program + ": " + cause.getMessage(), cause);
  }

  /**
   * The agent exited before its ready line: DISK_FULL when its output says the disk is full,
   * PORT_TAKEN when it says it could not bind, else EXITED; the detail names the exit code (and the
   * signal, for a shell-style code above 128).
   */
  public static RuntimeStartException exited(int exitCode, List<String> tail) {
    Kind kind =
        tail.stream().anyMatch(StartDiagnosis::saysDiskFull)
            ? Kind.DISK_FULL
            : tail.stream().anyMatch(StartDiagnosis::isBindFailure) ? Kind.PORT_TAKEN : Kind.EXITED;
    return RuntimeStartException.of(kind, "agent " + exitText(exitCode) + tailDetail(tail));
  }

  /** NEVER_READY: no ready line within {@code deadline}. */
  public static RuntimeStartException neverReady(Duration deadline, List<String> tail) {
    return RuntimeStartException.of(
        Kind.NEVER_READY,
        "agent printed no ready line within " + deadline.toMillis() + " ms" + tailDetail(tail));
  }

  /** UNKNOWN: {@code what} failed. */
  public static RuntimeStartException unexpected(String what, Throwable cause) {
    return RuntimeStartException.of(Kind.UNKNOWN, what + ": " + cause, cause);
  }

  /** {@code exited with code N}, plus the signal's name for 128 + a known signal number. */
  public static String exitText(int exitCode) {
    String signal = exitCode > 128 ? SIGNALS.get(exitCode - 128) : null;
    return "exited with code " + exitCode + (signal == null ? "" : " (" + signal + ")");
  }

  /** The agent's last output lines, for the raw detail. */
  public static String tailDetail(List<String> tail) {
    return tail.isEmpty() ? "; it printed nothing" : "; last output:\n" + String.join("\n", tail);
  }

  /**
   * ENOSPC from the file system anywhere in {@code e}'s causes (the JDK puts libc's text there).
   */
  public static boolean isDiskFull(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t.getMessage() != null && saysDiskFull(t.getMessage())) {
        return true;
      }
    }
    return false;
  }

  /** Whether {@code text} is the C library's "no space left on device". */
  public static boolean saysDiskFull(String text) {
    return text.toLowerCase(Locale.ROOT).contains("no space left on device");
  }

  /** Whether an output line says the agent could not bind its port. */
  public static boolean isBindFailure(String line) {
    String lower = line.toLowerCase(Locale.ROOT);
    return lower.contains("address already in use")
        || lower.contains("bindexception")
        || lower.contains("cannot listen on");
  }
}
