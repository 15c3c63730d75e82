package dev.paddock.agent.user;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.io.IOException;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;

/**
 * {@link FsIds} through libc's {@code setfsuid}/{@code setfsgid} (JDK 22+ Foreign Function API).
 * Each call runs on a new platform thread, which never carries other code: a virtual thread could
 * move between carriers, and the ids would stay behind on one.
 */
@SuppressWarnings("restricted") // Linker downcalls are restricted; the agent enables native access.
final class FfmFsIds implements FsIds {
  /** An id no account has: {@code setfsuid(-1)} changes nothing and answers the current id. */
  private static final int QUERY = -1;

  private static final Linker LINKER = Linker.nativeLinker();
  private static final MethodHandle SETFSUID = downcall("setfsuid");
  private static final MethodHandle SETFSGID = downcall("setfsgid");

  private static MethodHandle downcall(String name) {
    MemorySegment symbol =
        LINKER
            .defaultLookup()
            .find(name)
            .orElseThrow(() -> new IllegalStateException("libc has no " + name + "()"));
    return LINKER.downcallHandle(symbol, FunctionDescriptor.of(JAVA_INT, JAVA_INT));
  }

  @Override
  public <T> T callAs(RunAs user, Callable<T> work) throws Exception {
    FutureTask<T> task = new FutureTask<>(() -> onThisThread(user, work));
    Thread.ofPlatform().name("paddock-fs-ids").daemon(true).start(task);
    try {
      return task.get();
    } catch (ExecutionException e) {
      if (e.getCause() instanceof Exception cause) {
        throw cause;
      }
      if (e.getCause() instanceof Error error) {
        throw error;
      }
      throw e;
    }
  }

  private static <T> T onThisThread(RunAs user, Callable<T> work) throws Exception {
    RunAs agent;
    try {
      // Group first: switching the user id away from 0 drops the file capabilities.
      int gid = (int) SETFSGID.invokeExact(user.gid());
      int uid = (int) SETFSUID.invokeExact(user.uid());
      agent = new RunAs(uid, gid);
      if ((int) SETFSUID.invokeExact(QUERY) != user.uid()
          || (int) SETFSGID.invokeExact(QUERY) != user.gid()) {
        restore(agent);
        throw new IOException(
            "cannot act as the command user " + user + ": setfsuid/setfsgid were refused");
      }
    } catch (IOException | RuntimeException | Error e) {
      throw e;
    } catch (Throwable e) {
      throw new IllegalStateException(e);
    }
    try {
      return work.call();
    } finally {
      restore(agent);
    }
  }

  /** Puts back the agent's ids; the thread ends right after, so a failure only costs the answer. */
  private static void restore(RunAs agent) {
    try {
      int unusedUid = (int) SETFSUID.invokeExact(agent.uid());
      int unusedGid = (int) SETFSGID.invokeExact(agent.gid());
    } catch (Throwable e) {
      throw new IllegalStateException("could not restore the agent's file-system ids " + agent, e);
    }
  }
}
