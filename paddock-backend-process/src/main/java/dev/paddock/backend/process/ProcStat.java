package dev.paddock.backend.process;

/**
 * The fields of {@code /proc/<pid>/stat} this backend needs.
 *
 * @param pid the process
 * @param state one letter: R, S, D, T (stopped), t, Z (zombie), X, ...
 * @param ppid the parent
 * @param startTime when it started, in clock ticks after boot: with the pid, it names one process
 *     for the machine's uptime, so a reused pid is told apart
 */
record ProcStat(long pid, char state, long ppid, long startTime) {
  /** Running or stoppable: not a zombie and not being torn down. */
  boolean alive() {
    return state != 'Z' && state != 'X' && state != 'x';
  }

  /** Stopped by a signal (SIGSTOP) or a tracer. */
  boolean stopped() {
    return state == 'T' || state == 't';
  }

  /**
   * Parses one stat line. The command name (field 2) is in parentheses and may itself contain
   * spaces and parentheses, so fields are counted from the last {@code ')'}.
   *
   * @throws IllegalArgumentException when the line is not a stat line
   */
  static ProcStat parse(String line) {
    int close = line.lastIndexOf(')');
    if (close < 0 || close + 2 > line.length()) {
      throw new IllegalArgumentException("not a /proc stat line: " + line);
    }
    long pid = Long.parseLong(line.substring(0, line.indexOf(' ')).strip());
    String[] rest = line.substring(close + 2).strip().split(" ");
    // rest[0] is field 3 (state), rest[1] field 4 (ppid), rest[19] field 22 (starttime).
    return new ProcStat(pid, rest[0].charAt(0), Long.parseLong(rest[1]), Long.parseLong(rest[19]));
  }
}
