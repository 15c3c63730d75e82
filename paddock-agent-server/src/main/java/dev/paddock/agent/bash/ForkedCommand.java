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

/**
 * A one-shot command forked by the {@link ForkServer}: pumps read its two output sockets, a watcher
 * waits for its status line, cuts timed events and enforces the timeout on its process group.
 */
final class ForkedCommand implements CommandControl {
  /** After the status line, how long to wait for background children to release the sockets. */
  private static final Duration DRAIN_GRACE = Duration.ofMillis(200);

  /** How long a job may take to connect and report its pid before it counts as failed. */
  private static final Duration START_LIMIT = Duration.ofSeconds(10);

  private final CommandRecord record;
  private final ForkServer.Job job;
  private final ForkServer server;
  private volatile String lastSignal = "";

  private ForkedCommand(CommandRecord record, ForkServer.Job job, ForkServer server) {
    this.record = record;
    this.job = job;
    this.server = server;
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
    long started = System.nanoTime();
    Optional<ForkServer.Job> launched =
        server.launch(record.id, record.command, cwd, env, keepStdin);
    if (launched.isEmpty()) {
      return false;
    }
    ForkedCommand command = new ForkedCommand(record, launched.get(), server);
    record.attach(command);
    CompletableFuture<Void> out =
        command.pumpWhenConnected(launched.get().stdout, Channel.STDOUT, threads);
    CompletableFuture<Void> err =
        command.pumpWhenConnected(launched.get().stderr, Channel.STDERR, threads);
    threads.submit(() -> command.watch(started, killGrace, out, err));
    return true;
  }

  private CompletableFuture<Void> pumpWhenConnected(
      CompletableFuture<Socket> socket, Channel channel, ExecutorService threads) {
    return socket.thenAcceptAsync(
        s -> {
          try {
            Pumps.pump(s.getInputStream(), (b, o, n) -> record.append(channel, b, o, n));
          } catch (IOException e) {
            // The socket closed before it could be read: no output on this channel.
          }
        },
        threads);
  }

  private void watch(
      long started, Duration killGrace, CompletableFuture<Void> out, CompletableFuture<Void> err) {
    long deadline = started + TimeUnit.SECONDS.toNanos(record.timeoutSeconds);
    long startLimit = started + START_LIMIT.toNanos();
    boolean timedOut = false;
    Optional<String> error = Optional.empty();
    int exit = -1;
    try {
      while (true) {
        long tick =
            Math.min(CommandRecord.SEAL_INTERVAL_NANOS, Math.max(1, deadline - System.nanoTime()));
        try {
          exit = job.exit.get(tick, TimeUnit.NANOSECONDS);
          break;
        } catch (TimeoutException e) {
          record.sealIfDue();
        }
        if (System.nanoTime() >= deadline) {
          timedOut = true;
          error =
              Optional.of("timed out after " + record.timeoutSeconds + " s; process tree killed");
          stop(killGrace);
          break;
        }
        Long pid = job.pid.getNow(null);
        if (pid == null) {
          if (System.nanoTime() >= startLimit) {
            error = Optional.of("the command did not start (fork server job never reported)");
            break;
          }
          continue;
        }
        if (handle().map(h -> !h.isAlive()).orElse(true)) {
          // Gone without a status line: its group was killed outright (SIGKILL) or it crashed.
          try {
            exit = job.exit.get(50, TimeUnit.MILLISECONDS);
          } catch (TimeoutException e) {
            exit = lastSignal.equals("KILL") ? 137 : -1;
            error =
                Optional.of("the command's process group was killed before it reported a status");
          }
          break;
        }
      }
      awaitDrain(out);
      awaitDrain(err);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      stop(killGrace);
    } catch (ExecutionException e) {
      error = Optional.of("the command failed: " + e.getCause());
    }
    closeSockets();
    server.forget(job);
    long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
    record.finish(
        new CommandResult(
            timedOut ? -1 : exit,
            timedOut,
            record.truncated(Channel.STDOUT),
            record.truncated(Channel.STDERR),
            error,
            false,
            millis));
  }

  /** The job's process, while its pid is known and it is alive. */
  private Optional<ProcessHandle> handle() {
    Long pid = job.pid.getNow(null);
    return pid == null ? Optional.empty() : ProcessHandle.of(pid);
  }

  private static void awaitDrain(CompletableFuture<Void> pump) throws InterruptedException {
    try {
      pump.get(DRAIN_GRACE.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException | ExecutionException e) {
      // A background child still holds the socket, or it never connected: output ends here.
    }
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

  @Override
  public void closeStdin() throws IOException {
    Socket socket = stdinSocket();
    synchronized (socket) {
      socket.shutdownOutput();
    }
  }

  @Override
  public void signal(String signal) {
    lastSignal = signal;
    startedHandle().ifPresent(h -> ProcessTree.signal(h, true, signal));
  }

  /** The job's process, waiting (bounded) for its pid when it has only just been launched. */
  private Optional<ProcessHandle> startedHandle() {
    try {
      return ProcessHandle.of(job.pid.get(START_LIMIT.toMillis(), TimeUnit.MILLISECONDS));
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
    startedHandle()
        .ifPresent(
            h -> {
              try {
                ProcessTree.terminate(h, true, grace);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            });
  }
}
