package dev.paddock.agent.bash;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * A named, persistent bash: cwd, exported variables and functions carry over from one command to
 * the next. Commands run one at a time ({@link #turn}), each evaluated in the shell itself and
 * followed by a marker line on stdout (with the exit status) and on stderr, which the pump threads
 * find to know where the command's output ends.
 *
 * <p>On timeout the shell's children are stopped (TERM, grace, KILL) while the shell lives on; if
 * the command is the shell itself (a builtin loop), the shell is restarted and the result says
 * {@code session_reset}. Commands see {@code /dev/null} as stdin.
 */
final class ShellSession implements CommandControl {
  private static final String BASH = ProcessTree.findOnPath("bash").orElse("/bin/bash");
  private static final SecureRandom RANDOM = new SecureRandom();

  final String name;
  final Instant created = Instant.now();
  private final List<String> launchPrefix;
  private final Path workspace;
  private final Map<String, String> environment;
  private final Duration killGrace;
  private final ExecutorService threads;
  private final Semaphore turn = new Semaphore(1, true);

  // Guarded by this.
  private Process shell;
  private OutputStream shellIn;
  private MarkerScanner stdoutScanner;
  private MarkerScanner stderrScanner;
  private CommandRecord current;
  private boolean currentReset;
  private long currentStarted;
  // Set by the watcher before it stops a timed-out command, so a pump finishing it reports that.
  private boolean currentTimedOut;
  private int commandCount;
  private boolean closed;
  // The current shell's death was already reported (session_reset) by the command it ended with.
  private boolean deathReported;

  ShellSession(
      String name,
      List<String> launchPrefix,
      Path workspace,
      Map<String, String> environment,
      Duration killGrace,
      ExecutorService threads) {
    this.name = name;
    this.launchPrefix = List.copyOf(launchPrefix);
    this.workspace = workspace;
    this.environment = Map.copyOf(environment);
    this.killGrace = killGrace;
    this.threads = threads;
  }

  synchronized int commandCount() {
    return commandCount;
  }

  synchronized boolean busy() {
    return current != null;
  }

  synchronized Optional<Long> pid() {
    return shell == null || !shell.isAlive() ? Optional.empty() : Optional.of(shell.pid());
  }

  /**
   * Runs {@code record} in this shell once earlier commands are done, after changing to {@code dir}
   * (absolute) when given; returns at once. When the shell is free the command is written to it on
   * the caller's thread (no hand-off on the request path) and only the watching moves to a pool
   * thread.
   */
  void submit(CommandRecord record, Optional<Path> dir) {
    if (turn.tryAcquire()) {
      Optional<Turn> begun = begin(record, dir);
      if (begun.isEmpty()) {
        turn.release();
        return;
      }
      threads.submit(
          () -> {
            try {
              watch(record, begun.get());
            } finally {
              turn.release();
            }
          });
      return;
    }
    threads.submit(() -> run(record, dir));
  }

  private void run(CommandRecord record, Optional<Path> dir) {
    try {
      turn.acquire();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return;
    }
    try {
      begin(record, dir).ifPresent(t -> watch(record, t));
    } finally {
      turn.release();
    }
  }

  /** The shell a command was written to, and when. */
  private record Turn(Process process, long started, boolean reset) {}

  /** Makes {@code record} current and feeds it to the shell; empty when it ended right away. */
  private Optional<Turn> begin(CommandRecord record, Optional<Path> dir) {
    long started = System.nanoTime();
    String nonce = HexFormat.of().formatHex(bytes(12));
    boolean reset;
    Process process;
    synchronized (this) {
      if (closed) {
        record.finish(failure("session '" + name + "' was deleted", started));
        return Optional.empty();
      }
      try {
        reset = ensureShell();
      } catch (IOException e) {
        record.finish(failure("could not start the session shell: " + e.getMessage(), started));
        return Optional.empty();
      }
      record.markStarted();
      current = record;
      currentReset = reset;
      currentStarted = started;
      currentTimedOut = false;
      commandCount++;
      stdoutScanner.expect(nonce);
      stderrScanner.expect(nonce);
      process = shell;
      record.attach(this);
      try {
        shellIn.write(script(record, dir, nonce).getBytes(StandardCharsets.UTF_8));
        shellIn.flush();
      } catch (IOException e) {
        // The shell died between commands; the watcher reports it and the next turn restarts.
      }
    }
    return Optional.of(new Turn(process, started, reset));
  }

  /**
   * Called by a pump once its marker is in: when both markers are, the command is finished right
   * there (the watcher would only add a thread hop to the reply).
   */
  private void markerSeen() {
    CommandRecord record;
    boolean reset;
    long started;
    int status;
    boolean timedOut;
    synchronized (this) {
      if (current == null || !stdoutScanner.seen() || !stderrScanner.seen()) {
        return;
      }
      record = current;
      reset = currentReset;
      started = currentStarted;
      status = stdoutScanner.status();
      timedOut = currentTimedOut;
    }
    if (timedOut) {
      finishWith(record, -1, true, reset, started, Optional.of(timeoutMessage(record)));
    } else {
      finishWith(record, status, false, reset, started, Optional.empty());
    }
  }

  private static byte[] bytes(int n) {
    byte[] b = new byte[n];
    RANDOM.nextBytes(b);
    return b;
  }

  /** The text fed to the shell for one command: eval in a group so state persists. */
  private String script(CommandRecord record, Optional<Path> dir, String nonce) {
    StringBuilder s = new StringBuilder(record.command.length() + 160);
    s.append("{ ");
    dir.ifPresent(d -> s.append("cd -- ").append(quote(d.toString())).append(" && "));
    s.append("eval ").append(quote(record.command)).append("\n} </dev/null\n");
    s.append("__paddock_status=$?; printf '\\036PADDOCK:%s:%s\\n' ")
        .append(nonce)
        .append(" \"$__paddock_status\"; printf '\\036PADDOCK:%s:\\n' ")
        .append(nonce)
        .append(" >&2\n");
    return s.toString();
  }

  static String quote(String text) {
    return "'" + text.replace("'", "'\\''") + "'";
  }

  private void watch(CommandRecord record, Turn turn) {
    Process process = turn.process();
    long started = turn.started();
    boolean reset = turn.reset();
    long deadline = started + TimeUnit.SECONDS.toNanos(record.timeoutSeconds);
    boolean timedOut = false;
    try {
      while (!awaitMarkers(
          Math.min(CommandRecord.SEAL_INTERVAL_NANOS, deadline - System.nanoTime()))) {
        record.sealIfDue();
        if (!process.isAlive()) {
          // `exit` or a crash: the shell is gone, and with it the session's state.
          awaitMarkers(TimeUnit.MILLISECONDS.toNanos(200));
          markDeathReported();
          finishWith(
              record,
              process.waitFor(),
              false,
              true,
              started,
              Optional.of("the session shell exited; it restarts with a clean state"));
          return;
        }
        if (System.nanoTime() >= deadline) {
          timedOut = true;
          synchronized (this) {
            if (current == record) {
              currentTimedOut = true;
            }
          }
          break;
        }
      }
      if (!timedOut) {
        finishWith(record, stdoutScanner().status(), false, reset, started, Optional.empty());
        return;
      }
      ProcessTree.signalDescendants(process.toHandle(), "TERM");
      if (!awaitMarkers(killGrace.toNanos())) {
        ProcessTree.signalDescendants(process.toHandle(), "KILL");
        if (!awaitMarkers(TimeUnit.MILLISECONDS.toNanos(500))) {
          // The shell itself is busy (a builtin loop): only a restart frees the session.
          ProcessTree.terminate(process.toHandle(), ProcessTree.hasOwnGroup(), killGrace);
          markDeathReported();
          finishWith(
              record,
              -1,
              true,
              true,
              started,
              Optional.of(timeoutMessage(record) + "; the session shell was restarted"));
          return;
        }
      }
      finishWith(record, -1, true, reset, started, Optional.of(timeoutMessage(record)));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      finishWith(record, -1, false, reset, started, Optional.of("interrupted"));
    }
  }

  private static String timeoutMessage(CommandRecord record) {
    return "timed out after " + record.timeoutSeconds + " s; its processes were killed";
  }

  private synchronized void markDeathReported() {
    deathReported = true;
  }

  private synchronized MarkerScanner stdoutScanner() {
    return stdoutScanner;
  }

  private boolean awaitMarkers(long nanos) throws InterruptedException {
    MarkerScanner out;
    MarkerScanner err;
    synchronized (this) {
      out = stdoutScanner;
      err = stderrScanner;
    }
    long deadline = System.nanoTime() + Math.max(0, nanos);
    return out.await(deadline) && err.await(deadline);
  }

  private void finishWith(
      CommandRecord record,
      int exit,
      boolean timedOut,
      boolean reset,
      long started,
      Optional<String> error) {
    synchronized (this) {
      if (current == record) {
        current = null;
      }
    }
    record.end(exit, timedOut, error, reset, started);
  }

  private CommandResult failure(String message, long started) {
    return CommandResult.notRun(
        message, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
  }

  /**
   * Starts the shell if it is not running; returns true when this replaced a dead one whose death
   * no command has reported yet (a reset is reported once, not again by the next command).
   */
  private boolean ensureShell() throws IOException {
    if (shell != null && shell.isAlive()) {
      return false;
    }
    boolean replaced = shell != null && !deathReported;
    deathReported = false;
    List<String> argv = new ArrayList<>(launchPrefix);
    argv.addAll(List.of(BASH, "--noprofile", "--norc"));
    ProcessBuilder builder = new ProcessBuilder(argv).directory(workspace.toFile());
    builder.environment().clear();
    builder.environment().putAll(environment);
    Process started = builder.start();
    shell = started;
    shellIn = started.getOutputStream();
    // Read before the first command: the shell and all it runs are the OOM killer's first choice.
    shellIn.write((OomScore.PREFER_THIS_SHELL + "\n").getBytes(StandardCharsets.US_ASCII));
    MarkerScanner out = new MarkerScanner(Channel.STDOUT, this::current, this::markerSeen);
    MarkerScanner err = new MarkerScanner(Channel.STDERR, this::current, this::markerSeen);
    stdoutScanner = out;
    stderrScanner = err;
    threads.submit(
        () -> {
          Pumps.pump(started.getInputStream(), out::accept);
          out.markEof();
        });
    threads.submit(
        () -> {
          Pumps.pump(started.getErrorStream(), err::accept);
          err.markEof();
        });
    return replaced;
  }

  private synchronized CommandRecord current() {
    return current;
  }

  @Override
  public void writeStdin(byte[] data) {
    throw new IllegalStateException(
        "commands in a session read /dev/null; use a one-shot command for stdin");
  }

  @Override
  public void closeStdin() {
    throw new IllegalStateException(
        "commands in a session read /dev/null; use a one-shot command for stdin");
  }

  @Override
  public void signal(String signal) {
    Process process;
    synchronized (this) {
      process = shell;
    }
    if (process != null) {
      ProcessTree.signalDescendants(process.toHandle(), signal);
    }
  }

  @Override
  public void stop(Duration grace) {
    close();
  }

  /** Ends the shell and its children; a command in progress ends with an error. */
  void close() {
    Process process;
    synchronized (this) {
      closed = true;
      process = shell;
    }
    if (process != null) {
      try {
        ProcessTree.terminate(process.toHandle(), ProcessTree.hasOwnGroup(), killGrace);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
