package dev.paddock.agent;

import java.io.IOException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.IntConsumer;

/**
 * Signals the agent's launcher made it ignore stay ignored in every command it starts, since an
 * ignored disposition survives {@code exec}: a shell's {@code cmd &} ignores SIGINT, {@code nohup}
 * SIGHUP. Ctrl-C in a terminal and the interrupt routes would then do nothing, and the programs of
 * a closed terminal would live on. So the agent keeps ignoring them itself, through a handler that
 * does nothing, and handlers, unlike ignored dispositions, are reset by {@code exec}: commands get
 * the defaults. The disposition is set back to the default by a libc call ({@code FfmSignals}, JDK
 * 22+; the JVM installs no handler for a signal ignored at start-up) just before the handler goes
 * in; a signal in those microseconds of start-up would end the agent.
 */
final class InheritedSignals {
  /** The signals commands must get with their default action, by number. */
  private static final Map<Integer, String> RESTORED = Map.of(1, "HUP", 2, "INT");

  private InheritedSignals() {}

  /** Gives the commands to come the default action of every {@link #RESTORED} signal ignored. */
  static void restoreForCommands() {
    List<Integer> ignored = ignored(Path.of("/proc/self/status"));
    if (ignored.isEmpty()) {
      return;
    }
    try {
      IntConsumer setDefault =
          (IntConsumer)
              Class.forName("dev.paddock.agent.FfmSignals").getDeclaredConstructor().newInstance();
      for (int signal : ignored) {
        setDefault.accept(signal);
        handleByNothing(RESTORED.get(signal));
      }
    } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
      System.err.println(
          "paddock agent-server: WARNING signals "
              + ignored
              + " were ignored when the agent started and stay ignored in its commands ("
              + e
              + ")");
    }
  }

  /**
   * The signals of {@link #RESTORED} that the {@code SigIgn} mask of {@code status} names. Read
   * with the plainest stream there is: this runs at every agent start, where {@code
   * Files.readAllLines} cost 1.7 MiB of RSS and 10 ms (the classes it loads).
   */
  static List<Integer> ignored(Path status) {
    List<Integer> ignored = new ArrayList<>();
    String text;
    try (java.io.FileInputStream in = new java.io.FileInputStream(status.toString())) {
      text = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.ISO_8859_1);
    } catch (IOException e) {
      return ignored; // no /proc (not Linux): nothing to restore
    }
    int at = text.indexOf("SigIgn:");
    if (at < 0) {
      return ignored;
    }
    int end = text.indexOf('\n', at);
    try {
      long mask =
          Long.parseUnsignedLong(text.substring(at + 7, end < 0 ? text.length() : end).strip(), 16);
      for (int signal : List.of(1, 2)) {
        if ((mask & (1L << (signal - 1))) != 0) {
          ignored.add(signal);
        }
      }
    } catch (NumberFormatException e) {
      // A mask we cannot read: nothing to restore.
    }
    return ignored;
  }

  /**
   * {@code sun.misc.Signal.handle(new Signal(name), signal -> {})}, by reflection: javac warns
   * about every direct use of {@code jdk.unsupported}, and the build treats warnings as errors.
   */
  private static void handleByNothing(String name) throws ReflectiveOperationException {
    Class<?> signal = Class.forName("sun.misc.Signal");
    Class<?> handler = Class.forName("sun.misc.SignalHandler");
    Object nothing =
        Proxy.newProxyInstance(
            handler.getClassLoader(),
            new Class<?>[] {handler},
            (proxy, method, args) ->
                switch (method.getName()) {
                  case "hashCode" -> System.identityHashCode(proxy);
                  case "equals" -> proxy == args[0];
                  case "toString" -> "ignored by the agent";
                  default -> null; // handle(Signal): the agent goes on
                });
    signal
        .getMethod("handle", signal, handler)
        .invoke(null, signal.getConstructor(String.class).newInstance(name), nothing);
  }
}
