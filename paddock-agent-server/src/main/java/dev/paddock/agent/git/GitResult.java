package dev.paddock.agent.git;

import java.nio.charset.StandardCharsets;

/**
 * How a git process ended.
 *
 * @param exitCode the process exit status
 * @param stdout captured standard output (empty when it went to a file)
 * @param stderr the start of standard error, decoded as UTF-8
 */
record GitResult(int exitCode, byte[] stdout, String stderr) {
  boolean ok() {
    return exitCode == 0;
  }

  /** Standard output as UTF-8 without the trailing line break(s). */
  String text() {
    return new String(stdout, StandardCharsets.UTF_8).stripTrailing();
  }

  /** The error message git printed, trimmed; "exit N" when it printed none. */
  String message() {
    String trimmed = stderr.strip();
    return trimmed.isEmpty() ? "exit " + exitCode : trimmed;
  }
}
