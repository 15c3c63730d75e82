package dev.paddock.agent.pty;

import java.io.IOException;

/**
 * One pseudo-terminal pair: the master side, read and written by the agent, and a slave side held
 * open by the agent (with {@code O_NOCTTY}) for the device's life, so reads of the master never end
 * with {@code EIO} merely because no process has the slave open yet or any more; the end of a
 * terminal is its leader's exit. The master is non-blocking.
 *
 * <p>Threads: {@link #read} is called by one pump thread only; {@link #write}, {@link #resize} and
 * {@link #foregroundGroup} may be called from any thread (they are serialised inside); {@link
 * #close} once, after the pump has stopped.
 */
interface PtyDevice extends AutoCloseable {
  /** The slave's path, e.g. {@code /dev/pts/3}: the child opens it as its standard streams. */
  String slavePath();

  /**
   * Waits up to {@code timeoutMillis} (0: not at all) for output, then reads what there is.
   *
   * @return bytes read, 0 when none arrived in time, -1 when the device failed
   */
  int read(byte[] buffer, int offset, int length, int timeoutMillis) throws IOException;

  /**
   * Writes without blocking as much of the input as the terminal's input queue takes.
   *
   * @return bytes written, 0 when the queue is full (the program is not reading)
   */
  int write(byte[] data, int offset, int length) throws IOException;

  /** Sets the window size (TIOCSWINSZ); the kernel sends SIGWINCH to the foreground group. */
  void resize(int cols, int rows) throws IOException;

  /** The terminal's foreground process group (TIOCGPGRP), or -1 when there is none. */
  long foregroundGroup();

  @Override
  void close();
}
