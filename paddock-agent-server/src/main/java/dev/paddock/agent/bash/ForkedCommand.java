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

/**
 * A one-shot command forked by the {@link ForkServer}. Its two output sockets are read on the
 * threads that accepted them; the command is finished by whichever of the three events comes last
 * (stdout closed, stderr closed, status line in), so no thread hand-off sits on the reply path. A
 * watcher thread cuts timed events, enforces the timeout on the process group, notices a job that
 * died without a status, and stops waiting for output held open by background children 200 ms after
 * the status.
 */
final class ForkedCommand implements CommandControl, ForkServer.JobHandler {
  /** After the status line, how long to wait for background children to release the sockets. */
  private static final long DRAIN_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(200);

  /** How long a job may take to connect and report its pid before it counts as failed. */
  private static final Duration START_LIMIT = Duration.ofSeconds(10);

  private final CommandRecord record;
  private final ForkServer server;
  private final ExecutorService threads;
  private final long started = System.nanoTime();
  private final AtomicInteger outstanding = new AtomicInteger(3);
  private final AtomicBoolean finished = new AtomicBoolean();
  private final CompletableFuture<Void> done = new CompletableFuture<>();

  /** How long after its status a job's output connections may still arrive (under load). */
  private static final long OUTPUT_CONNECT_GRACE_NANOS = TimeUnit.SECONDS.toNanos(5);

  private volatile ForkServer.Job job;
  private volatile long statusNanos;
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
    statusNanos = System.nanoTime();
    if (outstanding.decrementAndGet() == 0) {
      threads.submit(this::complete);
    }
  }

  private void complete() {
    Integer exit = job.exit.getNow(null);
    if (timingOut) {
      finish(-1, true, Optional.of(timeoutMessage()));
    } else {
      finish(exit == null ? -1 : exit, false, Optional.empty());
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
        long now = System.nanoTime();
        if (job.exit.isDone() && now - statusNanos >= DRAIN_GRACE_NANOS) {
          if (job.stdout.isDone() && job.stderr.isDone()) {
            // A background child still holds an output socket: its later output is not ours.
            complete();
          } else if (now - statusNanos >= OUTPUT_CONNECT_GRACE_NANOS) {
            // The job reported its status but an output connection never reached us (e.g. the
            // agent could not start a thread while a fork bomb held every pid): never pass that
            // off as a command that printed nothing.
            finish(
                job.exit.getNow(-1),
                false,
                Optional.of(
                    "the command ran (exit "
                        + job.exit.getNow(-1)
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
        } else if (handle().map(h -> !h.isAlive()).orElse(true) && !job.exit.isDone()) {
          diedWithoutStatus();
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      stop(killGrace);
      finish(-1, false, Optional.of("interrupted"));
    } catch (ExecutionException e) {
      finish(-1, false, Optional.of("the command failed: " + e.getCause()));
    }
  }

  /** The job is gone without a status line: its group was killed outright, or it crashed. */
  private void diedWithoutStatus() throws InterruptedException, ExecutionException {
    try {
      job.exit.get(50, TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      finish(
          lastSignal.equals("KILL") ? 137 : -1,
          false,
          Optional.of("the command's process group was killed before it reported a status"));
    }
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
