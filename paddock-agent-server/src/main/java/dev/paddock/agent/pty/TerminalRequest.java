package dev.paddock.agent.pty;

import java.util.Map;
import java.util.Optional;

/**
 * What to run in a new terminal.
 *
 * @param command run by {@code bash -c}; empty starts the user's login shell ({@code -l})
 * @param cwd working directory, relative ones under the workspace; empty: the workspace
 * @param env variables added to (or replacing) the commands' environment
 * @param cols window width in columns, 1..1000
 * @param rows window height in rows, 1..1000
 */
record TerminalRequest(
    Optional<String> command, Optional<String> cwd, Map<String, String> env, int cols, int rows) {
  static final int DEFAULT_COLS = 80;
  static final int DEFAULT_ROWS = 24;
  static final int MAX_SIZE = 1000;

  TerminalRequest {
    env = Map.copyOf(env);
    checkSize(cols, rows);
  }

  static void checkSize(int cols, int rows) {
    if (cols < 1 || cols > MAX_SIZE || rows < 1 || rows > MAX_SIZE) {
      throw new IllegalArgumentException(
          "cols and rows must be 1.." + MAX_SIZE + ", got " + cols + "x" + rows);
    }
  }
}
