package dev.paddock.agent.bash;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A command run in a fresh {@code bash -c}, as the leader of its own process group: the fallback
 * when the {@link ForkServer} is disabled or unavailable. Two pump threads read stdout and stderr;
 * a watcher thread waits for exit, cuts timed events, and on timeout stops the whole tree (TERM,
 * grace, KILL).
 */
final class OneShotCommand implements CommandControl {
  /** After the shell exits, how long to wait for background children to release its pipes. */
  private static final Duration DRAIN_GRACE = Duration.ofMillis(200);

  private static final String BASH = ProcessTree.findOnPath("bash").orElse("/bin/sh");

  /**
   * The first bash's script; the command is its {@code $1}. {@code exec} gives back the level the
   * first bash added to {@code SHLVL}, so the command's bash counts as the agent's child.
   */
  private static final String LAUNCH =
      OomScore.PREFER_THIS_SHELL + "; exec -a bash \"$BASH\" -c \"$1\"";

  private final CommandRecord record;
  private final Process process;
  private final OutputStream stdin;

  private OneShotCommand(CommandRecord record, Process process, boolean keepStdin) {
    this.record = record;
    this.process = process;
    this.stdin = keepStdin ? process.getOutputStream() : null;
  }

  /** Starts the command; failures to start end the record with exit code -1 and a reason. */
  static void start(
      CommandRecord record,
      List<String> launchPrefix,
      Path cwd,
      Map<String, String> environment,
      boolean keepStdin,
      Duration killGrace,
      ExecutorService threads) {
    long started = System.nanoTime();
    Process process;
    try {
      process = coldStart(record, launchPrefix, cwd, environment, keepStdin);
    } catch (IOException | IllegalArgumentException e) {
      // IllegalArgumentException: an environment the OS refuses ('=' or NUL in a name) must end
      // the record, not strand it as running forever.
      byte[] message =
          ("Error executing command: " + e.getMessage() + "\n").getBytes(StandardCharsets.UTF_8);
      record.append(Channel.STDERR, message, 0, message.length);
      record.finish(CommandResult.notRun("could not start: " + e.getMessage(), 0));
      return;
    }
    OneShotCommand command = new OneShotCommand(record, process, keepStdin);
    record.attach(command);
    Future<?> out =
        threads.submit(
            () ->
                Pumps.pump(
                    process.getInputStream(), (b, o, n) -> record.append(Channel.STDOUT, b, o, n)));
    Future<?> err =
        threads.submit(
            () ->
                Pumps.pump(
                    process.getErrorStream(), (b, o, n) -> record.append(Channel.STDERR, b, o, n)));
    threads.submit(() -> command.watch(started, killGrace, out, err));
  }

  /**
   * Starts {@code <prefix> bash -c <command>}: a first bash sets the OOM preference, then execs the
   * command's own {@code bash -c}, named {@code bash} and with the {@code SHLVL} it would have had,
   * so the command's script, {@code $0}, messages and variables are exactly those of {@code bash -c
   * <command>} (the same as through the {@link ForkServer}).
   */
  private static Process coldStart(
      CommandRecord record,
      List<String> launchPrefix,
      Path cwd,
      Map<String, String> environment,
      boolean keepStdin)
      throws IOException {
    List<String> argv = new ArrayList<>(launchPrefix);
    argv.addAll(List.of(BASH, "-c", LAUNCH, "bash", record.command));
    ProcessBuilder builder = new ProcessBuilder(argv).directory(cwd.toFile());
    builder.environment().clear();
    builder.environment().putAll(environment);
    if (!keepStdin) {
      builder.redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
    }
    return builder.start();
  }

  private void watch(long started, Duration killGrace, Future<?> out, Future<?> err) {
    long deadline = started + TimeUnit.SECONDS.toNanos(record.timeoutSeconds);
    boolean timedOut = false;
    try {
      while (!process.waitFor(
          Math.min(CommandRecord.SEAL_INTERVAL_NANOS, Math.max(1, deadline - System.nanoTime())),
          TimeUnit.NANOSECONDS)) {
        record.sealIfDue();
        if (System.nanoTime() >= deadline) {
          timedOut = true;
          ProcessTree.terminate(process.toHandle(), ProcessTree.hasOwnGroup(), killGrace);
          process.waitFor();
          break;
        }
      }
      awaitDrain(out);
      awaitDrain(err);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      stop(killGrace);
    }
    closeStdinQuietly();
    int exit = timedOut ? -1 : process.isAlive() ? -1 : process.exitValue();
    record.end(
        exit,
        timedOut,
        timedOut
            ? Optional.of("timed out after " + record.timeoutSeconds + " s; process tree killed")
            : Optional.empty(),
        false,
        started);
  }

  private static void awaitDrain(Future<?> pump) throws InterruptedException {
    try {
      pump.get(DRAIN_GRACE.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      // A background child still holds the pipe open; its later output is not part of this result.
    } catch (java.util.concurrent.ExecutionException e) {
      // Pumps do not throw; nothing to report.
    }
  }

  @Override
  public void stop(Duration grace) {
    try {
      ProcessTree.terminate(process.toHandle(), ProcessTree.hasOwnGroup(), grace);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void writeStdin(byte[] data) throws IOException {
    if (stdin == null) {
      throw new IllegalStateException("command was not started with stdin open");
    }
    synchronized (stdin) {
      stdin.write(data);
      stdin.flush();
    }
  }

  @Override
  public void closeStdin() throws IOException {
    if (stdin == null) {
      throw new IllegalStateException("command was not started with stdin open");
    }
    synchronized (stdin) {
      stdin.close();
    }
  }

  private void closeStdinQuietly() {
    if (stdin != null) {
      try {
        closeStdin();
      } catch (IOException e) {
        // Already closed by the client or the process.
      }
    }
  }

  @Override
  public void signal(String signal) {
    ProcessTree.signal(process.toHandle(), ProcessTree.hasOwnGroup(), signal);
  }
}
