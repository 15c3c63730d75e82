package dev.paddock.backend.process;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Sends signals. SIGTERM and SIGKILL go through {@link ProcessHandle}; Java has no call for SIGSTOP
 * and SIGCONT, so those run {@code kill(1)} through the {@link ProcessLauncher} seam, one call for
 * a whole list of pids (signalled in list order). Vanished pids are ignored. Thread-safe.
 */
final class Signals {
  private static final String KILL =
      List.of("/usr/bin/kill", "/bin/kill").stream()
          .filter(p -> Files.isExecutable(Path.of(p)))
          .findFirst()
          .orElse("kill");

  private final ProcessLauncher launcher;

  Signals(ProcessLauncher launcher) {
    this.launcher = launcher;
  }

  /** SIGTERM to one process. */
  void terminate(long pid) {
    ProcessHandle.of(pid).ifPresent(ProcessHandle::destroy);
  }

  /** SIGKILL to each process. */
  void kill(Collection<Long> pids) {
    for (long pid : pids) {
      ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
    }
  }

  /** SIGSTOP to each process, in order. */
  void stop(List<Long> pids) {
    send("STOP", pids);
  }

  /** SIGCONT to each process, in order. */
  void resume(List<Long> pids) {
    send("CONT", pids);
  }

  private void send(String signal, List<Long> pids) {
    if (pids.isEmpty()) {
      return;
    }
    List<String> argv = new ArrayList<>(List.of(KILL, "-s", signal, "--"));
    pids.forEach(pid -> argv.add(Long.toString(pid)));
    try {
      Process kill =
          launcher.start(argv, Path.of("/"), Map.of("PATH", ProcessSettings.DEFAULT_PATH));
      kill.getOutputStream().close();
      try (InputStream out = kill.getInputStream()) {
        // Drained and dropped: kill(1) only says "no such process" for pids that just exited.
        out.transferTo(OutputStream.nullOutputStream());
      }
      if (!kill.waitFor(10, TimeUnit.SECONDS)) {
        kill.destroyForcibly();
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException("cannot run " + KILL + " -s " + signal, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while sending SIG" + signal, e);
    }
  }
}
