package dev.paddock.agent.pty;

import dev.paddock.agent.core.Signal;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One running (or ended) terminal: a child process whose standard streams are the slave of a {@link
 * PtyDevice}, the leader of its own session with that terminal as its controlling terminal, and the
 * bounded {@link Scrollback} of what it wrote.
 *
 * <p>Threads: one platform pump thread per terminal reads the master (a blocking native call would
 * pin a virtual thread's carrier), appends to the scrollback and, when the leader has exited,
 * drains what is left, hangs up the rest of the session and ends the scrollback. Input, resize and
 * signals come from request and WebSocket threads; input is serialised by {@link #inputLock}.
 */
final class Terminal {
  /** How long the pump waits for output before checking whether the leader has exited. */
  private static final int EXIT_CHECK_MILLIS = 50;

  /** How long a write may wait for a program that does not read its input. */
  private static final Duration INPUT_TIMEOUT = Duration.ofSeconds(10);

  final String id;
  final String command;
  final Path cwd;
  final Instant createdAt = Instant.now();
  final Scrollback output;
  final AtomicInteger viewers = new AtomicInteger();

  private final PtySystem system;
  private final PtyDevice device;
  private final Process process;
  private final Duration killGrace;
  private final Runnable activity;
  private final ReentrantLock inputLock = new ReentrantLock();
  private final CompletableFuture<Integer> exit = new CompletableFuture<>();
  private volatile int cols;
  private volatile int rows;
  private volatile Instant exitedAt;

  private Terminal(
      String id,
      String command,
      Path cwd,
      int scrollbackBytes,
      PtySystem system,
      PtyDevice device,
      Process process,
      Duration killGrace,
      Runnable activity,
      int cols,
      int rows) {
    this.id = id;
    this.command = command;
    this.cwd = cwd;
    this.output = new Scrollback(scrollbackBytes);
    this.system = system;
    this.device = device;
    this.process = process;
    this.killGrace = killGrace;
    this.activity = activity;
    this.cols = cols;
    this.rows = rows;
  }

  /** Everything needed to start a terminal's process. */
  record Launch(
      String id,
      String display,
      List<String> argv,
      Path cwd,
      Map<String, String> environment,
      int cols,
      int rows,
      int scrollbackBytes,
      Duration killGrace,
      Runnable activity) {}

  /**
   * Opens a pseudo-terminal, starts {@code launch.argv()} on it through {@code opener} (a shell
   * that opens the slave as fds 0-2, so the agent never opens it without {@code O_NOCTTY}) and
   * starts the pump.
   *
   * @param slaveOwner gives the slave to the user the terminal runs as
   */
  static Terminal start(PtySystem system, Launch launch, List<String> opener, SlaveOwner slaveOwner)
      throws IOException {
    PtyDevice device = system.open(launch.cols(), launch.rows());
    Process process;
    try {
      slaveOwner.own(Path.of(device.slavePath()));
      List<String> argv = new java.util.ArrayList<>(opener);
      argv.add(device.slavePath());
      argv.addAll(launch.argv());
      ProcessBuilder builder = new ProcessBuilder(argv).directory(launch.cwd().toFile());
      builder.environment().clear();
      builder.environment().putAll(launch.environment());
      process = builder.start();
    } catch (IOException | RuntimeException e) {
      device.close();
      throw e;
    }
    Terminal terminal =
        new Terminal(
            launch.id(),
            launch.display(),
            launch.cwd(),
            launch.scrollbackBytes(),
            system,
            device,
            process,
            launch.killGrace(),
            launch.activity(),
            launch.cols(),
            launch.rows());
    Thread pump = new Thread(null, terminal::pump, "paddock-terminal-" + launch.id(), 256 << 10);
    pump.setDaemon(true);
    pump.start();
    return terminal;
  }

  /** Changes ownership of the slave device to the terminal's user. */
  @FunctionalInterface
  interface SlaveOwner {
    void own(Path slave) throws IOException;
  }

  private void pump() {
    byte[] buffer = new byte[64 << 10];
    try {
      while (true) {
        int n = device.read(buffer, 0, buffer.length, EXIT_CHECK_MILLIS);
        if (n > 0) {
          output.append(buffer, 0, n);
          activity.run();
        } else if (n < 0 || !process.isAlive()) {
          drain(buffer);
          break;
        }
      }
      int code = process.waitFor();
      hangUpSession();
      exitedAt = Instant.now();
      exit.complete(code);
    } catch (IOException | RuntimeException e) {
      exit.completeExceptionally(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      exit.completeExceptionally(e);
    } finally {
      device.close();
      output.finish();
    }
  }

  /** Reads what the leader wrote before it exited (the agent's slave fd keeps the device up). */
  private void drain(byte[] buffer) throws IOException {
    int n;
    while ((n = device.read(buffer, 0, buffer.length, 0)) > 0) {
      output.append(buffer, 0, n);
    }
  }

  /**
   * What a terminal hangup does, for the jobs the leader left behind: SIGHUP (and SIGCONT, for
   * stopped ones), up to the kill grace for them to go, then SIGKILL.
   */
  private void hangUpSession() throws InterruptedException {
    long session = process.pid();
    List<Long> left = SessionMembers.of(session);
    if (left.isEmpty()) {
      return;
    }
    left.forEach(pid -> system.kill(pid, Signal.HUP.number()));
    left.forEach(pid -> system.kill(pid, 18));
    long deadline = System.nanoTime() + killGrace.toNanos();
    while (!(left = SessionMembers.of(session)).isEmpty() && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    for (int pass = 0; pass < 50 && !left.isEmpty(); pass++) {
      left.forEach(pid -> system.kill(pid, Signal.KILL.number()));
      Thread.sleep(10);
      left = SessionMembers.of(session);
    }
  }

  /**
   * Writes {@code data} to the terminal's input, waiting (unmounted) while its input queue is full.
   *
   * @throws IOException when the terminal has ended or does not take the input within 10 s
   */
  void input(byte[] data) throws IOException {
    inputLock.lock();
    try {
      long deadline = System.nanoTime() + INPUT_TIMEOUT.toNanos();
      for (int written = 0; written < data.length; ) {
        if (!running()) {
          throw new IOException("terminal " + id + " has exited");
        }
        int n = device.write(data, written, data.length - written);
        written += n;
        if (n == 0) {
          if (System.nanoTime() > deadline) {
            throw new IOException(
                "terminal "
                    + id
                    + " is not reading its input: "
                    + written
                    + " of "
                    + data.length
                    + " bytes written");
          }
          // Back off briefly; a virtual thread unmounts while it sleeps.
          Thread.sleep(2);
        }
      }
      activity.run();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while writing to terminal " + id, e);
    } finally {
      inputLock.unlock();
    }
  }

  void resize(int newCols, int newRows) throws IOException {
    TerminalRequest.checkSize(newCols, newRows);
    if (!running()) {
      throw new IOException("terminal " + id + " has exited");
    }
    device.resize(newCols, newRows);
    cols = newCols;
    rows = newRows;
  }

  /**
   * Sends {@code signal} to the terminal's foreground process group, as a key such as Ctrl-C would,
   * or to the leader's group when the terminal has no foreground group.
   */
  void signal(int signal) {
    if (!running()) {
      return;
    }
    long group = device.foregroundGroup();
    system.kill(group > 0 ? -group : -process.pid(), signal);
  }

  /** Starts a hangup of the whole session: SIGHUP and SIGCONT to every member. */
  void hangUp() {
    if (running()) {
      SessionMembers.of(process.pid()).forEach(pid -> system.kill(pid, Signal.HUP.number()));
      SessionMembers.of(process.pid()).forEach(pid -> system.kill(pid, 18));
    }
  }

  /** SIGKILL to every member of the session. */
  void killSession() {
    SessionMembers.of(process.pid()).forEach(pid -> system.kill(pid, Signal.KILL.number()));
  }

  /** Waits up to {@code timeout} for the terminal to end; true when it has. */
  boolean awaitExit(Duration timeout) throws InterruptedException {
    try {
      exit.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
      return true;
    } catch (TimeoutException e) {
      return false;
    } catch (java.util.concurrent.ExecutionException e) {
      return true;
    }
  }

  /** Hangs up, waits the kill grace, then kills the session; waits (bounded) for the end. */
  void terminate() throws InterruptedException {
    hangUp();
    if (!awaitExit(killGrace)) {
      killSession();
      awaitExit(Duration.ofSeconds(5));
    }
  }

  boolean running() {
    return !exit.isDone();
  }

  Optional<Integer> exitCode() {
    return exit.isDone() && !exit.isCompletedExceptionally()
        ? Optional.of(exit.join())
        : exit.isDone() ? Optional.of(-1) : Optional.empty();
  }

  CompletableFuture<Integer> exit() {
    return exit;
  }

  TerminalInfo info() {
    return new TerminalInfo(
        id,
        command,
        cwd.toString(),
        cols,
        rows,
        process.pid(),
        running(),
        exitCode(),
        createdAt,
        Optional.ofNullable(exitedAt),
        output.end(),
        output.start(),
        viewers.get());
  }
}
