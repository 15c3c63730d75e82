package dev.paddock.backend.process;

import dev.paddock.api.spi.RuntimeFailure.Kind;
import dev.paddock.api.spi.RuntimeStartException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/** Builds the classified exceptions of a failed start; raw detail is for the log only. */
final class StartFailures {
  private StartFailures() {}

  static RuntimeStartException binaryMissing(String program, Throwable cause) {
    return failure(
        Kind.BINARY_MISSING, "cannot execute " + program + ": " + cause.getMessage(), cause);
  }

  /**
   * The agent exited before its ready line: PORT_TAKEN when its output says it could not bind, else
   * EXITED.
   */
  static RuntimeStartException exited(int exitCode, List<String> tail) {
    Kind kind =
        tail.stream().anyMatch(StartFailures::isBindFailure) ? Kind.PORT_TAKEN : Kind.EXITED;
    if (tail.stream().anyMatch(StartFailures::saysDiskFull)) {
      kind = Kind.DISK_FULL;
    }
    return failure(kind, "agent exited with code " + exitCode + tailDetail(tail), null);
  }

  static RuntimeStartException neverReady(Duration deadline, List<String> tail) {
    return failure(
        Kind.NEVER_READY,
        "agent printed no ready line within " + deadline.toMillis() + " ms" + tailDetail(tail),
        null);
  }

  static RuntimeStartException unexpected(String what, Throwable cause) {
    return failure(Kind.UNKNOWN, what + ": " + cause, cause);
  }

  static RuntimeStartException failure(Kind kind, String detail, Throwable cause) {
    return RuntimeStartException.of(kind, detail, cause);
  }

  /** The agent's last output lines, for the raw detail. */
  static String tailDetail(List<String> tail) {
    return tail.isEmpty() ? "; it printed nothing" : "; last output:\n" + String.join("\n", tail);
  }

  /** ENOSPC from the file system (the JDK puts the C library's text in the message). */
  static boolean isDiskFull(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t.getMessage() != null && saysDiskFull(t.getMessage())) {
        return true;
      }
    }
    return false;
  }

  private static boolean saysDiskFull(String text) {
    return text.toLowerCase(Locale.ROOT).contains("no space left on device");
  }

  private static boolean isBindFailure(String line) {
    String lower = line.toLowerCase(Locale.ROOT);
    return lower.contains("address already in use")
        || lower.contains("bindexception")
        || lower.contains("cannot listen on");
  }
}
