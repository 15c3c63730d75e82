package dev.paddock.agent.pty;

import java.io.IOException;

/**
 * The operating-system calls terminals need: pseudo-terminal pairs and signals. The implementation
 * ({@code FfmPtySystem}) calls libc through the Foreign Function and Memory API, final in JDK 22;
 * it lives in the jar's {@code META-INF/versions/22} section and is loaded by {@link PtySystems}
 * only when the first terminal opens, so an agent that never opens one never loads it.
 */
interface PtySystem {
  /** Opens a new pseudo-terminal pair with the given window size. */
  PtyDevice open(int cols, int rows) throws IOException;

  /** kill(2): sends {@code signal} to {@code pid} (a negative pid names a process group). */
  void kill(long pid, int signal);
}
