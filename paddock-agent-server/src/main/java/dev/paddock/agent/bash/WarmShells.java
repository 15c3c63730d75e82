package dev.paddock.agent.bash;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A few one-shot shells started ahead of time, so a command does not pay for {@code fork}, {@code
 * exec setsid}, {@code exec bash} and bash's start-up on its request path (about 2 ms of the 2.5 ms
 * a cold start costs here). Each waits, as the leader of its own process group, for one
 * NUL-terminated script on stdin, then evaluates it; whatever stdin remains after the NUL is the
 * command's stdin. A shell is used once and replaced in the background. Thread-safe.
 */
final class WarmShells implements AutoCloseable {
  /** Scripts longer than this are started cold: bash reads the script byte by byte. */
  static final int MAX_SCRIPT_BYTES = 16 << 10;

  private static final String BASH = ProcessTree.findOnPath("bash").orElse("/bin/bash");
  private static final String BOOT =
      "IFS= read -r -d '' __paddock_script || exit 97; eval \"$__paddock_script\"";

  private final BlockingQueue<Process> ready;
  private final Path directory;
  private final Map<String, String> environment;
  private final Duration killGrace;
  private final ExecutorService threads;
  private final AtomicBoolean refilling = new AtomicBoolean();
  private volatile boolean closed;

  WarmShells(
      int size,
      Path directory,
      Map<String, String> environment,
      Duration killGrace,
      ExecutorService threads) {
    this.ready = new ArrayBlockingQueue<>(Math.max(1, size));
    this.directory = directory;
    this.environment = Map.copyOf(environment);
    this.killGrace = killGrace;
    this.threads = threads;
    if (size > 0) {
      refillLater();
    } else {
      closed = true;
    }
  }

  /**
   * Hands out a warm shell already fed {@code script} (prefixed with a {@code cd} to {@code cwd}),
   * or empty when none is ready or the script is too long; the caller then starts one cold.
   */
  Optional<Process> start(String script, Path cwd, boolean keepStdin) {
    if (closed) {
      return Optional.empty();
    }
    byte[] text =
        ("cd -- " + ShellSession.quote(cwd.toString()) + " || exit 1\n" + script)
            .getBytes(StandardCharsets.UTF_8);
    if (text.length > MAX_SCRIPT_BYTES || script.indexOf('\0') >= 0) {
      return Optional.empty();
    }
    Process shell;
    while ((shell = ready.poll()) != null) {
      refillLater();
      if (!shell.isAlive()) {
        continue;
      }
      try {
        OutputStream in = shell.getOutputStream();
        in.write(text);
        in.write(0);
        in.flush();
        if (!keepStdin) {
          in.close();
        }
        return Optional.of(shell);
      } catch (IOException e) {
        shell.destroyForcibly();
      }
    }
    refillLater();
    return Optional.empty();
  }

  private void refillLater() {
    if (!closed && ready.remainingCapacity() > 0 && refilling.compareAndSet(false, true)) {
      threads.submit(this::refill);
    }
  }

  private void refill() {
    try {
      while (!closed && ready.remainingCapacity() > 0) {
        Process shell = spawn();
        if (!ready.offer(shell) || closed) {
          stop(shell);
          break;
        }
      }
    } catch (IOException e) {
      // Cold starts keep working; the next take tries again.
    } finally {
      refilling.set(false);
    }
    if (closed) {
      drain();
    }
  }

  private Process spawn() throws IOException {
    List<String> argv = new ArrayList<>(ProcessTree.newSessionPrefix());
    argv.addAll(List.of(BASH, "--noprofile", "--norc", "-c", BOOT));
    ProcessBuilder builder = new ProcessBuilder(argv).directory(directory.toFile());
    builder.environment().clear();
    builder.environment().putAll(environment);
    return builder.start();
  }

  private void stop(Process shell) {
    try {
      shell.getOutputStream().close();
    } catch (IOException e) {
      // Closing stdin makes the idle shell exit on its own; the kill below is the backstop.
    }
    try {
      ProcessTree.terminate(shell.toHandle(), ProcessTree.hasOwnGroup(), killGrace);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void drain() {
    Process shell;
    while ((shell = ready.poll()) != null) {
      stop(shell);
    }
  }

  @Override
  public void close() {
    closed = true;
    drain();
  }
}
