package dev.paddock.agent.bash;

import java.io.IOException;

/** Live control of a running command: its stdin and signals to its process tree. */
interface CommandControl {
  /** Writes to the command's stdin; fails with {@link IllegalStateException} if it has none. */
  void writeStdin(byte[] data) throws IOException;

  void closeStdin() throws IOException;

  /** Sends a (normalised) signal name to the command's whole process tree. */
  void signal(String signal);

  /** Stops the whole process tree (TERM, {@code grace}, KILL); used at shutdown. */
  void stop(java.time.Duration grace);
}
