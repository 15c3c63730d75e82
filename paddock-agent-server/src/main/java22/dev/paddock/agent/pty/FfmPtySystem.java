package dev.paddock.agent.pty;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * {@link PtySystem} through libc downcalls (JDK 22+ Foreign Function API, no native library of our
 * own, nothing unpacked to disk). Linux on x86-64 and AArch64: the constants below are the generic
 * Linux ABI values both share.
 */
@SuppressWarnings("restricted") // Linker downcalls are restricted; the agent enables native access.
final class FfmPtySystem implements PtySystem {
  static final int O_RDWR = 2;
  static final int O_NOCTTY = 0x100;
  static final int O_NONBLOCK = 0x800;
  static final int O_CLOEXEC = 0x80000;
  static final long TIOCSWINSZ = 0x5414;
  static final long TIOCGPGRP = 0x540F;
  static final int EINTR = 4;
  static final int EAGAIN = 11;
  static final short POLLIN = 1;

  private static final Linker LINKER = Linker.nativeLinker();
  static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
  private static final VarHandle ERRNO =
      CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
  private static final Linker.Option ERRNO_OPTION = Linker.Option.captureCallState("errno");

  static final MethodHandle OPEN =
      downcall(
          "open",
          FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT),
          ERRNO_OPTION,
          Linker.Option.firstVariadicArg(2));
  static final MethodHandle GRANTPT =
      downcall("grantpt", FunctionDescriptor.of(JAVA_INT, JAVA_INT), ERRNO_OPTION);
  static final MethodHandle UNLOCKPT =
      downcall("unlockpt", FunctionDescriptor.of(JAVA_INT, JAVA_INT), ERRNO_OPTION);
  static final MethodHandle PTSNAME_R =
      downcall("ptsname_r", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_LONG));
  static final MethodHandle IOCTL =
      downcall(
          "ioctl",
          FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS),
          ERRNO_OPTION,
          Linker.Option.firstVariadicArg(2));
  static final MethodHandle READ =
      downcall(
          "read", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG), ERRNO_OPTION);
  static final MethodHandle WRITE =
      downcall(
          "write", FunctionDescriptor.of(JAVA_LONG, JAVA_INT, ADDRESS, JAVA_LONG), ERRNO_OPTION);
  static final MethodHandle POLL =
      downcall("poll", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_INT), ERRNO_OPTION);
  static final MethodHandle CLOSE = downcall("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
  static final MethodHandle KILL =
      downcall("kill", FunctionDescriptor.of(JAVA_INT, JAVA_INT, JAVA_INT));

  private static MethodHandle downcall(
      String name, FunctionDescriptor descriptor, Linker.Option... options) {
    MemorySegment symbol =
        LINKER
            .defaultLookup()
            .find(name)
            .orElseThrow(() -> new IllegalStateException("libc has no " + name + "()"));
    return LINKER.downcallHandle(symbol, descriptor, options);
  }

  /** The errno a call captured into {@code state}. */
  static int errno(MemorySegment state) {
    return (int) ERRNO.get(state, 0L);
  }

  @Override
  public PtyDevice open(int cols, int rows) throws IOException {
    return FfmPtyDevice.open(cols, rows);
  }

  @Override
  public void kill(long pid, int signal) {
    try {
      int unused = (int) KILL.invokeExact((int) pid, signal);
    } catch (Throwable e) {
      throw new IllegalStateException("kill(" + pid + ", " + signal + ") failed: " + e, e);
    }
  }

  /** Opens {@code path} with {@code flags}; returns the descriptor. */
  static int open(String path, int flags) throws IOException {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment state = arena.allocate(CALL_STATE);
      int fd = (int) OPEN.invokeExact(state, arena.allocateFrom(path), flags, 0);
      if (fd < 0) {
        throw new IOException("open(" + path + ") failed: errno " + errno(state));
      }
      return fd;
    } catch (IOException | RuntimeException | Error e) {
      throw e;
    } catch (Throwable e) {
      throw new IllegalStateException(e);
    }
  }

  static void close(int fd) {
    try {
      int unused = (int) CLOSE.invokeExact(fd);
    } catch (Throwable e) {
      throw new IllegalStateException("close(" + fd + ") failed: " + e, e);
    }
  }
}
