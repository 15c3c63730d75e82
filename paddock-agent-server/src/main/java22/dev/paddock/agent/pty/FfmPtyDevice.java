package dev.paddock.agent.pty;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A pseudo-terminal opened through {@code /dev/ptmx}; see {@link PtyDevice} for the contract. The
 * native buffers live in one shared arena freed by {@link #close}: the read buffer belongs to the
 * pump thread, the others are used under {@link #lock}.
 */
final class FfmPtyDevice implements PtyDevice {
  private static final int READ_BUFFER = 64 << 10;
  private static final int WRITE_BUFFER = 16 << 10;

  private final int master;
  private final int slave;
  private final String slavePath;
  private final Arena arena = Arena.ofShared();
  private final MemorySegment readBuffer = arena.allocate(READ_BUFFER);
  private final MemorySegment readState = arena.allocate(FfmPtySystem.CALL_STATE);
  private final MemorySegment pollFd = arena.allocate(8);

  /** Guards the segments below and the descriptors' closing. */
  private final ReentrantLock lock = new ReentrantLock();

  private final MemorySegment writeBuffer = arena.allocate(WRITE_BUFFER);
  private final MemorySegment writeState = arena.allocate(FfmPtySystem.CALL_STATE);
  private final MemorySegment winsize = arena.allocate(8);
  private final MemorySegment groupId = arena.allocate(4);
  private boolean closed;

  private FfmPtyDevice(int master, int slave, String slavePath) {
    this.master = master;
    this.slave = slave;
    this.slavePath = slavePath;
  }

  static FfmPtyDevice open(int cols, int rows) throws IOException {
    int master =
        FfmPtySystem.open(
            "/dev/ptmx",
            FfmPtySystem.O_RDWR
                | FfmPtySystem.O_NOCTTY
                | FfmPtySystem.O_NONBLOCK
                | FfmPtySystem.O_CLOEXEC);
    try {
      String path = unlock(master);
      // O_NOCTTY: the agent may lead a session without a terminal (PID 1 in a container), and must
      // not make this one its own controlling terminal.
      int slave =
          FfmPtySystem.open(
              path, FfmPtySystem.O_RDWR | FfmPtySystem.O_NOCTTY | FfmPtySystem.O_CLOEXEC);
      FfmPtyDevice device = new FfmPtyDevice(master, slave, path);
      device.resize(cols, rows);
      return device;
    } catch (IOException | RuntimeException e) {
      FfmPtySystem.close(master);
      throw e;
    }
  }

  private static String unlock(int master) throws IOException {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment state = arena.allocate(FfmPtySystem.CALL_STATE);
      if ((int) FfmPtySystem.GRANTPT.invokeExact(state, master) != 0) {
        throw new IOException("grantpt failed: errno " + FfmPtySystem.errno(state));
      }
      if ((int) FfmPtySystem.UNLOCKPT.invokeExact(state, master) != 0) {
        throw new IOException("unlockpt failed: errno " + FfmPtySystem.errno(state));
      }
      MemorySegment name = arena.allocate(128);
      int failed = (int) FfmPtySystem.PTSNAME_R.invokeExact(master, name, name.byteSize());
      if (failed != 0) {
        throw new IOException("ptsname_r failed: error " + failed);
      }
      return name.getString(0, StandardCharsets.US_ASCII);
    } catch (IOException | RuntimeException | Error e) {
      throw e;
    } catch (Throwable e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public String slavePath() {
    return slavePath;
  }

  @Override
  public int read(byte[] buffer, int offset, int length, int timeoutMillis) throws IOException {
    try {
      pollFd.set(ValueLayout.JAVA_INT, 0, master);
      pollFd.set(ValueLayout.JAVA_SHORT, 4, FfmPtySystem.POLLIN);
      pollFd.set(ValueLayout.JAVA_SHORT, 6, (short) 0);
      int ready = (int) FfmPtySystem.POLL.invokeExact(readState, pollFd, 1L, timeoutMillis);
      if (ready <= 0) {
        return ready == 0 || FfmPtySystem.errno(readState) == FfmPtySystem.EINTR ? 0 : -1;
      }
      // A pty hands out at most about 4 KiB per read: read on until the buffer is full or the
      // master is drained, so the scrollback and viewers see fewer, larger chunks.
      long want = Math.min(length, READ_BUFFER);
      long total = 0;
      while (total < want) {
        long n =
            (long)
                FfmPtySystem.READ.invokeExact(
                    readState, master, readBuffer.asSlice(total), want - total);
        if (n > 0) {
          total += n;
          continue;
        }
        int errno = n < 0 ? FfmPtySystem.errno(readState) : FfmPtySystem.EAGAIN;
        if (total == 0 && errno != FfmPtySystem.EAGAIN && errno != FfmPtySystem.EINTR) {
          return -1;
        }
        break;
      }
      MemorySegment.copy(readBuffer, ValueLayout.JAVA_BYTE, 0, buffer, offset, (int) total);
      return (int) total;
    } catch (RuntimeException | Error e) {
      throw e;
    } catch (Throwable e) {
      throw new IOException("reading the terminal failed: " + e, e);
    }
  }

  @Override
  public int write(byte[] data, int offset, int length) throws IOException {
    lock.lock();
    try {
      ensureOpen();
      int chunk = Math.min(length, WRITE_BUFFER);
      MemorySegment.copy(data, offset, writeBuffer, ValueLayout.JAVA_BYTE, 0, chunk);
      long n = (long) FfmPtySystem.WRITE.invokeExact(writeState, master, writeBuffer, (long) chunk);
      if (n >= 0) {
        return (int) n;
      }
      int errno = FfmPtySystem.errno(writeState);
      if (errno == FfmPtySystem.EAGAIN || errno == FfmPtySystem.EINTR) {
        return 0;
      }
      throw new IOException("writing to the terminal failed: errno " + errno);
    } catch (IOException | RuntimeException | Error e) {
      throw e;
    } catch (Throwable e) {
      throw new IOException("writing to the terminal failed: " + e, e);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void resize(int cols, int rows) throws IOException {
    lock.lock();
    try {
      ensureOpen();
      // struct winsize { unsigned short ws_row, ws_col, ws_xpixel, ws_ypixel; }
      winsize.set(ValueLayout.JAVA_SHORT, 0, (short) rows);
      winsize.set(ValueLayout.JAVA_SHORT, 2, (short) cols);
      winsize.set(ValueLayout.JAVA_SHORT, 4, (short) 0);
      winsize.set(ValueLayout.JAVA_SHORT, 6, (short) 0);
      int result =
          (int)
              FfmPtySystem.IOCTL.invokeExact(writeState, master, FfmPtySystem.TIOCSWINSZ, winsize);
      if (result != 0) {
        throw new IOException("TIOCSWINSZ failed: errno " + FfmPtySystem.errno(writeState));
      }
    } catch (IOException | RuntimeException | Error e) {
      throw e;
    } catch (Throwable e) {
      throw new IOException("resizing the terminal failed: " + e, e);
    } finally {
      lock.unlock();
    }
  }

  @Override
  public long foregroundGroup() {
    lock.lock();
    try {
      if (closed) {
        return -1;
      }
      int result =
          (int) FfmPtySystem.IOCTL.invokeExact(writeState, master, FfmPtySystem.TIOCGPGRP, groupId);
      return result == 0 ? groupId.get(ValueLayout.JAVA_INT, 0) : -1;
    } catch (Throwable e) {
      return -1;
    } finally {
      lock.unlock();
    }
  }

  private void ensureOpen() throws IOException {
    if (closed) {
      throw new IOException("the terminal is closed");
    }
  }

  @Override
  public void close() {
    lock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      FfmPtySystem.close(slave);
      FfmPtySystem.close(master);
      arena.close();
    } finally {
      lock.unlock();
    }
  }
}
