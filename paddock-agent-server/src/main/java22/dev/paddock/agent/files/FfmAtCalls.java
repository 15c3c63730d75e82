package dev.paddock.agent.files;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.paddock.agent.user.RunAs;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.Optional;

/**
 * {@link AtCalls} through libc downcalls (JDK 22+ Foreign Function API; no native library of our
 * own). Linux on x86-64 and AArch64, whose {@code O_PATH} and {@code O_CLOEXEC} values are the
 * generic ones.
 *
 * <p>The file-system ids are switched around a single downcall, with nothing in between that could
 * unmount a virtual thread from its carrier (no lock, no I/O, no allocation of native memory): the
 * ids belong to the carrier thread, and are back to the agent's before any other code runs on it.
 */
@SuppressWarnings("restricted") // Linker downcalls are restricted; the agent enables native access.
final class FfmAtCalls implements AtCalls {
  private static final int O_PATH = 0x200000;
  private static final int O_CLOEXEC = 0x80000;

  /** An id no account has: {@code setfsuid(-1)} changes nothing and answers the current id. */
  private static final int QUERY = -1;

  private static final Linker LINKER = Linker.nativeLinker();
  private static final StructLayout CALL_STATE = Linker.Option.captureStateLayout();
  private static final VarHandle ERRNO =
      CALL_STATE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
  private static final Linker.Option ERRNO_OPTION = Linker.Option.captureCallState("errno");

  private static final MethodHandle OPEN =
      downcall(
          "open",
          FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT),
          ERRNO_OPTION,
          Linker.Option.firstVariadicArg(2));
  private static final MethodHandle MKDIRAT =
      downcall(
          "mkdirat", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS, JAVA_INT), ERRNO_OPTION);
  private static final MethodHandle SYMLINKAT =
      downcall(
          "symlinkat", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS), ERRNO_OPTION);
  private static final MethodHandle CLOSE =
      downcall("close", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
  private static final MethodHandle SETFSUID =
      downcall("setfsuid", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
  private static final MethodHandle SETFSGID =
      downcall("setfsgid", FunctionDescriptor.of(JAVA_INT, JAVA_INT));

  private static MethodHandle downcall(
      String name, FunctionDescriptor descriptor, Linker.Option... options) {
    MemorySegment symbol =
        LINKER
            .defaultLookup()
            .find(name)
            .orElseThrow(() -> new IllegalStateException("libc has no " + name + "()"));
    return LINKER.downcallHandle(symbol, descriptor, options);
  }

  @Override
  public int openPath(String path) throws IOException {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment state = arena.allocate(CALL_STATE);
      int fd = (int) OPEN.invokeExact(state, arena.allocateFrom(path), O_PATH | O_CLOEXEC, 0);
      if (fd < 0) {
        throw Errno.exception(errno(state), path);
      }
      return fd;
    } catch (IOException | RuntimeException | Error e) {
      throw e;
    } catch (Throwable e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void mkdirat(int dirFd, String name, int mode, Optional<RunAs> as, String shown)
      throws IOException {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment entry = arena.allocateFrom(name);
      callAs(arena, as, shown, state -> (int) MKDIRAT.invokeExact(state, dirFd, entry, mode));
    }
  }

  @Override
  public void symlinkat(String target, int dirFd, String name, Optional<RunAs> as, String shown)
      throws IOException {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment text = arena.allocateFrom(target);
      MemorySegment entry = arena.allocateFrom(name);
      callAs(arena, as, shown, state -> (int) SYMLINKAT.invokeExact(state, text, dirFd, entry));
    }
  }

  /** One downcall that captures errno into {@code state} and answers the call's result. */
  @FunctionalInterface
  private interface Downcall {
    int invoke(MemorySegment state) throws Throwable;
  }

  /**
   * Runs {@code call} with {@code as}'s file-system ids (everything it needs allocated before, so
   * nothing between the switch and the restore can move the thread); a non-zero result is the
   * errno's exception, naming {@code shown}.
   */
  private static void callAs(Arena arena, Optional<RunAs> as, String shown, Downcall call)
      throws IOException {
    MemorySegment state = arena.allocate(CALL_STATE);
    try {
      int result;
      Ids agent = become(as);
      try {
        result = call.invoke(state);
      } finally {
        restore(agent);
      }
      if (result != 0) {
        throw Errno.exception(errno(state), shown);
      }
    } catch (IOException | RuntimeException | Error e) {
      throw e;
    } catch (Throwable e) {
      throw new IllegalStateException(e);
    }
  }

  @Override
  public void close(int fd) {
    try {
      int unused = (int) CLOSE.invokeExact(fd);
    } catch (Throwable e) {
      throw new IllegalStateException("close(" + fd + ") failed: " + e, e);
    }
  }

  /** The file-system ids a thread had before {@link #become}; empty when nothing was switched. */
  private record Ids(Optional<RunAs> before) {}

  /**
   * Switches this thread's file-system ids to {@code as} (group first: the user id is what drops
   * the file capabilities), checking they took: {@code setfsuid} reports no errors.
   */
  private static Ids become(Optional<RunAs> as) throws Throwable {
    if (as.isEmpty()) {
      return new Ids(Optional.empty());
    }
    int gid = (int) SETFSGID.invokeExact(as.get().gid());
    int uid = (int) SETFSUID.invokeExact(as.get().uid());
    Ids agent = new Ids(Optional.of(new RunAs(uid, gid)));
    if ((int) SETFSUID.invokeExact(QUERY) != as.get().uid()
        || (int) SETFSGID.invokeExact(QUERY) != as.get().gid()) {
      restore(agent);
      throw new IOException(
          "cannot act as the command user " + as.get() + ": setfsuid/setfsgid were refused");
    }
    return agent;
  }

  /** Puts back the ids {@link #become} found; a thread left as another user must not go on. */
  private static void restore(Ids agent) throws Throwable {
    if (agent.before().isEmpty()) {
      return;
    }
    RunAs ids = agent.before().get();
    int unusedUid = (int) SETFSUID.invokeExact(ids.uid());
    int unusedGid = (int) SETFSGID.invokeExact(ids.gid());
    if ((int) SETFSUID.invokeExact(QUERY) != ids.uid()
        || (int) SETFSGID.invokeExact(QUERY) != ids.gid()) {
      throw new IllegalStateException(
          "could not restore the agent's file-system ids " + ids + " after a call as another user");
    }
  }

  private static int errno(MemorySegment state) {
    return (int) ERRNO.get(state, 0L);
  }
}
