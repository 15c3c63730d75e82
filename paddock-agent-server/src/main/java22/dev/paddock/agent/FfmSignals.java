package dev.paddock.agent;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.function.IntConsumer;

/**
 * Sets a signal's disposition to the default ({@code signal(n, SIG_DFL)}), for {@link
 * InheritedSignals}.
 */
@SuppressWarnings("restricted") // Linker downcalls are restricted; the agent enables native access.
final class FfmSignals implements IntConsumer {
  private static final MethodHandle SIGNAL;

  static {
    Linker linker = Linker.nativeLinker();
    SIGNAL =
        linker.downcallHandle(
            linker
                .defaultLookup()
                .find("signal")
                .orElseThrow(() -> new IllegalStateException("libc has no signal()")),
            FunctionDescriptor.of(ADDRESS, JAVA_INT, ADDRESS));
  }

  @Override
  public void accept(int signal) {
    MemorySegment previous;
    try {
      previous = (MemorySegment) SIGNAL.invokeExact(signal, MemorySegment.NULL); // SIG_DFL is 0
    } catch (Throwable e) {
      throw new IllegalStateException("signal(" + signal + ", SIG_DFL) failed", e);
    }
    if (previous.address() == -1L) { // SIG_ERR
      throw new IllegalStateException("signal(" + signal + ", SIG_DFL) was refused");
    }
  }
}
