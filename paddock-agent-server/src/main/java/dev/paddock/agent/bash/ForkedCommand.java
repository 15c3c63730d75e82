package dev.paddock.agent.bash;

import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A one-shot command forked by the {@link ForkServer}. Its two output sockets are read on the
 * threads that accepted them; the command is finished by whichever of the three events comes last
 * (stdout closed, stderr closed, status in), so no thread hand-off sits on the reply path. A
 * watcher thread cuts timed events, enforces the timeout on the process group, notices a job that
 * died without a status, and stops waiting for output held open by background children.
 *
 * <p>On a loaded machine any thread of ours may run late, so no decision here rests on a short wait
 * for one (the limits left, 10 s for a pid and 5 s after the status, are far above scheduling
 * delays). A job found gone without a status is taken as killed only once the status barrier
 * ({@link ForkServer#statusRead}) shows that no {@code E} line was on its way. Output held open
 * past the status is cut only once the drain grace is over <em>and</em> nothing is left unread on
 * the connections (the job wrote all its own output before its status); the cut closes the
 * connections and the record still ends through the pumps, after they have handed over all they
 * read.
 */
final class ForkedCommand implements CommandControl, ForkServer.JobHandler {
  /** After the status line, how long to wait for background children to release the sockets. */
  static final Duration DRAIN_GRACE = Duration.ofMillis(200);

  private static final long DRAIN_GRACE_NANOS = DRAIN_GRACE.toNanos();

  /**
   * After the status line, how long output may keep arriving before the sockets are cut even with
   * bytes unread: a background child that never stops writing must not hold the command open.
   */
  private static final long DRAIN_LIMIT_NANOS = TimeUnit.SECONDS.toNanos(5);

  /** How long a job may take to connect and report its pid before it counts as failed. */
  private static final Duration START_LIMIT = Duration.ofSeconds(10);

  /** How long after its status a job's output connections may still arrive (under load). */
  private static final long OUTPUT_CONNECT_GRACE_NANOS = TimeUnit.SECONDS.toNanos(5);

  /** {@link #statusNanos} before the status (or the verdict that none will come) is in. */
  private static final long NO_STATUS = Long.MIN_VALUE;

  private static final String KILLED_MESSAGE =
      "the command's process group was killed before it reported a status";

  private final CommandRecord record;
  private final ForkServer server;
  private final ExecutorService threads;
  private final long started = System.nanoTime();
  private final AtomicInteger outstanding = new AtomicInteger(3);
  private final AtomicBoolean finished = new AtomicBoolean();
  private final CompletableFuture<Void> done = new CompletableFuture<>();

  private volatile ForkServer.Job job;

  /** When the status (or the verdict that none will come) came in; counted once. */
  private final AtomicLong statusNanos = new AtomicLong(NO_STATUS);

  /** Set by the watcher when the job is gone and the barrier showed it wrote no status. */
  private volatile Optional<Integer> killedExit = Optional.empty();

  /** The status barrier asked for once the job's process was found gone; the watcher's only. */
  private CompletableFuture<Void> statusBarrier;

  private volatile boolean timingOut;
  private volatile String lastSignal = "";

  private ForkedCommand(CommandRecord record, ForkServer server, ExecutorService threads) {
    this.record = record;
    this.server = server;
    this.threads = threads;
  }

  /** Starts {@code record} through {@code server}; false when the server cannot take it. */
  static boolean start(
      CommandRecord record,
      Path cwd,
      Map<String, String> env,
      boolean keepStdin,
      Duration killGrace,
      ExecutorService threads,
      ForkServer server) {
    ForkedCommand command = new ForkedCommand(record, server, threads);
    Optional<ForkServer.Job> launched = server.launch(record.command, cwd, env, keepStdin, command);
    if (launched.isEmpty()) {
      return false;
    }
    command.job = launched.get();
    record.attach(command);
    launched.get().exit.thenRun(command::statusArrived);
    threads.submit(() -> command.watch(killGrace));
    return true;
  }

  @Override
  public void connected(Channel channel, Socket socket) {
    try {
      Pumps.pump(socket.getInputStream(), (b, o, n) -> record.append(channel, b, o, n));
    } catch (IOException e) {
      // The socket closed before it could be read: no output on this channel.
    }
    if (outstanding.decrementAndGet() == 0) {
      complete();
    }
  }

  /** On the fork server's status thread: keep it free, finish elsewhere if this was the last. */
  private void statusArrived() {
    if (countStatus()) {
      threads.submit(this::complete);
    }
  }

  /**
   * Counts the status (a real one, or the watcher's verdict that none will come) once; true when
   * that was the last of the three events.
   */
  private boolean countStatus() {
    return statusNanos.compareAndSet(NO_STATUS, System.nanoTime())
        && outstanding.decrementAndGet() == 0;
  }

  /** The exit the status gave, or the verdict's when the job was killed before it could. */
  private int statusExit() {
    return job.exit.getNow(killedExit.orElse(-1));
  }

  private void complete() {
    if (timingOut) {
      finish(-1, true, Optional.of(timeoutMessage()));
    } else if (!job.exit.isDone() && killedExit.isPresent()) {
      finish(killedExit.get(), false, Optional.of(KILLED_MESSAGE));
    } else {
      finish(statusExit(), false, Optional.empty());
    }
  }

  private String timeoutMessage() {
    return "timed out after " + record.timeoutSeconds + " s; process tree killed";
  }

  /** Ends the record once; later calls do nothing. */
  private void finish(int exit, boolean timedOut, Optional<String> error) {
    if (!finished.compareAndSet(false, true)) {
      return;
    }
    closeSockets();
    server.forget(job);
    record.end(exit, timedOut, error, false, started);
    done.complete(null);
  }

  private void watch(Duration killGrace) {
    long deadline = started + TimeUnit.SECONDS.toNanos(record.timeoutSeconds);
    long startLimit = started + START_LIMIT.toNanos();
    try {
      while (!finished.get()) {
        long tick =
            Math.min(CommandRecord.SEAL_INTERVAL_NANOS, Math.max(1, deadline - System.nanoTime()));
        try {
          done.get(tick, TimeUnit.NANOSECONDS);
          return;
        } catch (TimeoutException e) {
          record.sealIfDue();
        }
        check(System.nanoTime(), deadline, startLimit, killGrace);
        long status = statusNanos.get();
        server
            .interleaving()
            .watcherChecked(
                status == NO_STATUS
                    ? Optional.empty()
                    : Optional.of(Duration.ofNanos(System.nanoTime() - status)));
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      stop(killGrace);
      finish(-1, false, Optional.of("interrupted"));
    } catch (ExecutionException e) {
      finish(-1, false, Optional.of("the command failed: " + e.getCause()));
    }
  }

  /** One look at the job by the watcher: its output after the status, its timeout, its death. */
  private void check(long now, long deadline, long startLimit, Duration killGrace)
      throws InterruptedException {
    long status = statusNanos.get();
    if (status != NO_STATUS) {
      if (now - status < DRAIN_GRACE_NANOS) {
        return;
      }
      if (job.stdout.isDone() && job.stderr.isDone()) {
        if (nothingUnread() || now - status >= DRAIN_LIMIT_NANOS) {
          // A background child still holds an output socket: its later output is not ours. The
          // pumps, woken by the close, hand over what they read; the last event ends the record.
          closeSockets();
        }
      } else if (now - status >= OUTPUT_CONNECT_GRACE_NANOS) {
        // The job reported its status but an output connection never reached us (e.g. the
        // agent could not start a thread while a fork bomb held every pid): never pass that
        // off as a command that printed nothing.
        finish(
            statusExit(),
            false,
            Optional.of(
                "the command ran (exit "
                    + statusExit()
                    + ") but its output never reached the agent, so it is missing here"));
      }
    } else if (now >= deadline) {
      timingOut = true;
      stop(killGrace);
      finish(-1, true, Optional.of(timeoutMessage()));
    } else if (job.pid.getNow(null) == null) {
      if (now >= startLimit) {
        finish(-1, false, Optional.of("the command did not start (no report from its job)"));
      }
    } else if (handle().map(h -> !h.isAlive()).orElse(true)) {
      goneWithoutStatus();
    }
  }

  /**
   * The job's process is gone and its status not in: a status line still on its way (the status
   * reader runs late) or none at all (its group was killed outright). The barrier tells which: once
   * it is read, a status the job wrote before it died has been read too.
   */
  private void goneWithoutStatus() {
    if (statusBarrier == null) {
      statusBarrier = server.statusRead(job);
    }
    if (statusBarrier.isDone() && !job.exit.isDone()) {
      killedExit = Optional.of(lastSignal.equals("KILL") ? 137 : -1);
      if (countStatus()) {
        complete();
      }
    }
  }

  /** True when no output connection has bytes waiting to be read (a closed one has none). */
  private boolean nothingUnread() {
    for (CompletableFuture<Socket> connection : java.util.List.of(job.stdout, job.stderr)) {
      Socket socket = connection.getNow(null);
      if (socket == null) {
        continue;
      }
      try {
        if (socket.getInputStream().available() > 0) {
          return false;
        }
      } catch (IOException e) {
        // Closed: nothing more can be read from it.
      }
    }
    return true;
  }

  /** The job's process, while its pid is known and it is alive. */
  private Optional<ProcessHandle> handle() {
    Long pid = job.pid.getNow(null);
    return pid == null ? Optional.empty() : ProcessHandle.of(pid);
  }

  private void closeSockets() {
    for (CompletableFuture<Socket> socket : java.util.List.of(job.stdout, job.stderr)) {
      if (!socket.complete(null)) {
        Socket s = socket.getNow(null);
        if (s != null) {
          try {
            s.close();
          } catch (IOException e) {
            // Already closed.
          }
        }
      }
    }
  }

  private Socket stdinSocket() throws IOException {
    if (!job.keepStdin) {
      throw new IllegalStateException("command was not started with stdin open");
    }
    try {
      Socket socket = job.stdout.get(START_LIMIT.toMillis(), TimeUnit.MILLISECONDS);
      if (socket == null) {
        throw new IOException("the command has ended");
      }
      return socket;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted while waiting for the command to start", e);
    } catch (ExecutionException | TimeoutException e) {
      throw new IOException("the command's stdin is not connected", e);
    }
  }

  @Override
  public void writeStdin(byte[] data) throws IOException {
    Socket socket = stdinSocket();
    OutputStream stdin = socket.getOutputStream();
    synchronized (socket) {
      stdin.write(data);
      stdin.flush();
    }
  }

  /**
   * Closes the command's stdin. Idempotent, and a command that already ended (it read what it
   * needed and exited between the last write and this call) counts as closed, not as an error.
   */
  @Override
  public void closeStdin() throws IOException {
    if (finished.get()) {
      return;
    }
    Socket socket = stdinSocket();
    synchronized (socket) {
      if (socket.isClosed() || socket.isOutputShutdown()) {
        return;
      }
      try {
        socket.shutdownOutput();
      } catch (IOException e) {
        if (!socket.isClosed() && !finished.get()) {
          throw e;
        }
      }
    }
  }

  @Override
  public void signal(String signal) {
    lastSignal = signal;
    startedGroup().ifPresent(group -> ProcessTree.signalGroup(group, signal));
  }

  /**
   * The job's process group (its first process's pid), waiting (bounded) for it when the job has
   * only just been launched. The group outlives its leader when the leader exits first (a fork
   * bomb's top shell does, when fork fails), so signals go to the group, not the leader.
   */
  private Optional<Long> startedGroup() {
    try {
      return Optional.ofNullable(job.pid.get(START_LIMIT.toMillis(), TimeUnit.MILLISECONDS));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.empty();
    } catch (ExecutionException | TimeoutException e) {
      return Optional.empty();
    }
  }

  @Override
  public void stop(Duration grace) {
    lastSignal = "KILL";
    Optional<Long> group = startedGroup();
    if (group.isPresent()) {
      try {
        ProcessTree.terminateGroup(group.get(), grace);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }
}
