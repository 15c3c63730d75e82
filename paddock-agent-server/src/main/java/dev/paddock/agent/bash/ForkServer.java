package dev.paddock.agent.bash;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.regex.Pattern;

/**
 * Starts one-shot commands by forking them from a long-lived bash (a "zygote") instead of {@code
 * fork + exec setsid + exec bash} from the JVM: a fork of a small, already initialised shell costs
 * a fraction of a fresh bash's start-up, in CPU as much as in latency.
 *
 * <p>The zygote runs with job control ({@code set -m}), so each command is a background job that
 * leads its own process group, exactly like {@code setsid}. A job connects its stdout and stderr
 * (and, when asked, stdin) back to this agent over two loopback TCP connections ({@code /dev/tcp}),
 * each announced by a random per-command token, so output stays apart and streams as it does over
 * pipes. The job reports {@code S <id> <pid>} when it starts and {@code E <id> <status>} when its
 * command ends on the zygote's stdout. A job killed outright (SIGKILL to its group) ends without an
 * {@code E}; its watcher notices the pid is gone.
 *
 * <p>If the zygote cannot be started or dies, {@link #launch} answers empty and commands start
 * cold. Thread-safe.
 */
final class ForkServer implements AutoCloseable {
  private static final String BASH = ProcessTree.findOnPath("bash").orElse("/bin/bash");
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
  private static final Duration TOKEN_READ_TIMEOUT = Duration.ofSeconds(5);
  private static final int TOKEN_LINE_BYTES = 32 + 3;

  private final ServerSocket listener;
  private final Map<String, Job> byToken = new ConcurrentHashMap<>();
  private final Map<String, Job> byId = new ConcurrentHashMap<>();
  private final java.util.concurrent.atomic.AtomicLong jobNumbers =
      new java.util.concurrent.atomic.AtomicLong();
  private final java.util.concurrent.atomic.AtomicLong barrierNumbers =
      new java.util.concurrent.atomic.AtomicLong();
  private final ExecutorService threads;
  private final List<String> launchPrefix;
  private final Path directory;
  private final Map<String, String> environment;
  private final Duration killGrace;
  private final ForkInterleaving interleaving;

  // Guarded by this.
  private Zygote zygote;
  private boolean closed;

  private ForkServer(
      ServerSocket listener,
      ExecutorService threads,
      List<String> launchPrefix,
      Path directory,
      Map<String, String> environment,
      Duration killGrace,
      ForkInterleaving interleaving) {
    this.listener = listener;
    this.threads = threads;
    this.launchPrefix = List.copyOf(launchPrefix);
    this.directory = directory;
    this.environment = Map.copyOf(environment);
    this.killGrace = killGrace;
    this.interleaving = interleaving;
  }

  /**
   * One zygote process: its request pipe, and what its status reader has yet to answer. A job keeps
   * the zygote that forked it: its status lines come down that zygote's pipe only.
   */
  static final class Zygote {
    final Process process;
    final OutputStream requests;

    /** Barriers asked for and not yet read back, by number. */
    final Map<String, CompletableFuture<Void>> barriers = new ConcurrentHashMap<>();

    /** Completed when the status pipe reaches its end: every status line has been read. */
    final CompletableFuture<Void> drained = new CompletableFuture<>();

    Zygote(Process process) {
      this.process = process;
      this.requests = process.getOutputStream();
    }
  }

  /**
   * A fork server, or empty when this system cannot run one (then commands start cold).
   *
   * @param launchPrefix argv put before the zygote's bash: {@code setsid}, the user switch
   */
  static Optional<ForkServer> start(
      ExecutorService threads,
      List<String> launchPrefix,
      Path directory,
      Map<String, String> environment,
      Duration killGrace,
      ForkInterleaving interleaving) {
    try {
      ServerSocket listener = new ServerSocket();
      listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 128);
      ForkServer server =
          new ForkServer(
              listener, threads, launchPrefix, directory, environment, killGrace, interleaving);
      threads.submit(server::acceptLoop);
      return Optional.of(server);
    } catch (IOException e) {
      return Optional.empty();
    }
  }

  /** Receives a job's output connections, on the thread that accepted them. */
  interface JobHandler {
    /** Called once per channel; may block for as long as it reads the socket. */
    void connected(Channel channel, Socket socket);
  }

  /** A command started by the zygote: its output sockets, pid and exit status as they arrive. */
  static final class Job {
    final String id;
    final String token;
    final boolean keepStdin;
    final JobHandler handler;
    final CompletableFuture<Socket> stdout = new CompletableFuture<>();
    final CompletableFuture<Socket> stderr = new CompletableFuture<>();
    final CompletableFuture<Long> pid = new CompletableFuture<>();
    final CompletableFuture<Integer> exit = new CompletableFuture<>();

    /** The zygote that forked it; set before its request is written. */
    volatile Zygote zygote;

    Job(String id, String token, boolean keepStdin, JobHandler handler) {
      this.id = id;
      this.token = token;
      this.keepStdin = keepStdin;
      this.handler = handler;
    }
  }

  /**
   * Asks the zygote to run {@code script} in {@code cwd} with extra {@code env}; empty when the
   * zygote is unavailable or the request cannot be expressed (a NUL byte, a bad variable name).
   */
  Optional<Job> launch(
      String script, Path cwd, Map<String, String> env, boolean keepStdin, JobHandler handler) {
    if (script.indexOf('\0') >= 0 || cwd.toString().indexOf('\0') >= 0) {
      return Optional.empty();
    }
    Optional<String> exports = exports(env);
    if (exports.isEmpty()) {
      return Optional.empty();
    }
    String token = HexFormat.of().formatHex(bytes(16));
    // A short job number keys the status lines; the secret token only travels to the job. The
    // zygote reads requests a byte per syscall, so every byte saved counts.
    String id = Long.toString(jobNumbers.incrementAndGet(), 36);
    String dir = cwd.equals(directory) ? "" : cwd.toString();
    Job job = new Job(id, token, keepStdin, handler);
    byToken.put(token, job);
    byId.put(id, job);
    String request =
        String.join("\0", token, id, dir, keepStdin ? "1" : "0", exports.get(), script) + '\0';
    synchronized (this) {
      try {
        Zygote forking = ensureZygote();
        job.zygote = forking;
        forking.requests.write(request.getBytes(StandardCharsets.UTF_8));
        forking.requests.flush();
        return Optional.of(job);
      } catch (IOException e) {
        forget(job);
        return Optional.empty();
      }
    }
  }

  /**
   * The {@code export} lines giving a job its extra variables (run in the job before its bash, so
   * they never shift the script's line numbers); empty when a name or value cannot be expressed.
   */
  private static Optional<String> exports(Map<String, String> env) {
    StringBuilder exports = new StringBuilder();
    for (Map.Entry<String, String> e : env.entrySet()) {
      if (!ENV_NAME.matcher(e.getKey()).matches() || e.getValue().indexOf('\0') >= 0) {
        return Optional.empty();
      }
      exports.append("export ").append(e.getKey()).append('=');
      exports.append(ShellSession.quote(e.getValue())).append('\n');
    }
    return Optional.of(exports.toString());
  }

  /**
   * Completes once every status line that {@code job}'s zygote's pipe held when this was called has
   * been read (and acted on: a job's {@code E} completes its {@link Job#exit} first). The zygote
   * answers a barrier request with a {@code B} line, which a pipe delivers after everything written
   * to it before; a zygote that is gone answers with the end of its pipe instead. Call it once a
   * job is known to have ended: its {@code E}, if it wrote one, then precedes the barrier.
   */
  CompletableFuture<Void> statusRead(Job job) {
    Zygote forked = job.zygote;
    CompletableFuture<Void> barrier = new CompletableFuture<>();
    String number = Long.toString(barrierNumbers.incrementAndGet(), 36);
    forked.barriers.put(number, barrier);
    forked.drained.thenRun(() -> barrier.complete(null));
    synchronized (this) {
      try {
        // An empty token makes it a barrier; the other five fields keep the zygote's framing.
        forked.requests.write(("\0" + number + "\0\0\0\0\0").getBytes(StandardCharsets.UTF_8));
        forked.requests.flush();
      } catch (IOException e) {
        // The zygote is gone: the end of its status pipe answers the barrier.
      }
    }
    return barrier;
  }

  /** Drops a job's routing entries once it is done. */
  void forget(Job job) {
    byToken.remove(job.token);
    byId.remove(job.id);
  }

  private static byte[] bytes(int n) {
    byte[] b = new byte[n];
    RANDOM.nextBytes(b);
    return b;
  }

  /** Starts the zygote now rather than on the first command (call once the agent is serving). */
  synchronized void warmUp() {
    try {
      ensureZygote();
    } catch (IOException e) {
      // The first launch tries again, and falls back to cold starts if it fails too.
    }
  }

  /** The running zygote, started if there is none. Holds this lock. */
  private Zygote ensureZygote() throws IOException {
    if (closed) {
      throw new IOException("fork server closed");
    }
    if (zygote != null && zygote.process.isAlive()) {
      return zygote;
    }
    List<String> argv = new ArrayList<>(launchPrefix);
    argv.addAll(List.of(BASH, "--noprofile", "--norc", "-c", script(listener.getLocalPort())));
    ProcessBuilder builder = new ProcessBuilder(argv).directory(directory.toFile());
    builder.environment().clear();
    builder.environment().putAll(environment);
    builder.redirectError(ProcessBuilder.Redirect.DISCARD);
    Zygote started = new Zygote(builder.start());
    zygote = started;
    threads.submit(() -> readStatus(started));
    return started;
  }

  /**
   * The zygote: reads NUL-separated requests (token, job number, cwd or empty for its own, stdin
   * flag, exports, script) and runs each as a background job. Inside a job, fd 3 is the zygote's
   * stdout (the status channel) and fds 4 and 5 the output connections. The command itself is a
   * fresh {@code bash -c} exec'd in a subshell that holds none of those, named {@code bash}, with
   * the zygote's {@code SHLVL} and {@code OLDPWD}: its output, error messages ({@code bash: line 1:
   * ...}), {@code $0}, {@code $$}, variables and environment are exactly those of {@code bash -c}
   * started by the agent itself. The wrapper keeps its own stderr (discarded), so nothing it says,
   * such as bash's report of a killed job, reaches the command's stderr; it traps the signals a
   * group receives so that it survives them and still reports the status. The zygote first makes
   * itself, and so every job it forks, the OOM killer's preferred victim. Each job is disowned as
   * soon as it starts: the zygote never waits for one (a job reports its own status), and a
   * non-interactive shell would otherwise keep every finished job in its table, which each later
   * fork copies and frees, so that the cost of a command grew with the number run before it.
   */
  private static String script(int port) {
    return String.join(
        "\n",
        OomScore.PREFER_THIS_SHELL,
        "set -m",
        "__paddock_job() {",
        "  exec 4<>/dev/tcp/127.0.0.1/" + port + " 5<>/dev/tcp/127.0.0.1/" + port + " || exit 1",
        "  printf '%s o\\n' \"$2\" >&4; printf '%s e\\n' \"$2\" >&5",
        "  case $4 in 1) exec 0<&4 ;; *) exec 0</dev/null ;; esac",
        "  printf 'S %s %s\\n' \"$1\" \"$BASHPID\" >&3",
        "  if [ -n \"$3\" ]; then",
        "    __paddock_old=${OLDPWD-}; __paddock_had=${OLDPWD+1}",
        "    cd -P -- \"$3\" 2>/dev/null || {",
        "      printf 'Error executing command: cannot change to directory %s\\n' \"$3\" >&5",
        "      exec 4>&- 5>&-; printf 'E %s -1\\n' \"$1\" >&3; exit 1; }",
        "    if [ -n \"$__paddock_had\" ]; then OLDPWD=$__paddock_old; else unset OLDPWD; fi",
        "  fi",
        "  trap : INT TERM HUP QUIT USR1 USR2 WINCH",
        "  ( exec 3>&- 4>&- 5>&-; eval \"$5\"; SHLVL=$((SHLVL - 1))",
        "    exec -a bash \"$BASH\" -c \"$6\" ) 1>&4 2>&5",
        // Close the output first: the agent sees end-of-output and the status together.
        "  __paddock_status=$?; exec 4>&- 5>&- 0<&-",
        "  printf 'E %s %d\\n' \"$1\" \"$__paddock_status\" >&3",
        "}",
        "exec 3>&1",
        "while IFS= read -r -d '' __paddock_tok && IFS= read -r -d '' __paddock_id &&"
            + " IFS= read -r -d '' __paddock_dir && IFS= read -r -d '' __paddock_in &&"
            + " IFS= read -r -d '' __paddock_env && IFS= read -r -d '' __paddock_src; do",
        "  case $__paddock_tok in '') printf 'B %s 0\\n' \"$__paddock_id\"; continue ;; esac",
        "  __paddock_job \"$__paddock_id\" \"$__paddock_tok\" \"$__paddock_dir\" \"$__paddock_in\""
            + " \"$__paddock_env\" \"$__paddock_src\" &",
        // Out of the job table at once: a shell that is never asked about its jobs keeps every
        // finished one, and each fork copies and frees the whole table (cost grew per command).
        "  disown $!",
        "done");
  }

  /**
   * The status reader of one zygote: {@code S}/{@code E} lines complete their job's futures, {@code
   * B} lines their barrier; the end of the pipe completes every barrier, asked or yet to be.
   */
  private void readStatus(Zygote from) {
    try (BufferedReader reader =
        new BufferedReader(
            new InputStreamReader(from.process.getInputStream(), StandardCharsets.UTF_8))) {
      String line;
      while ((line = reader.readLine()) != null) {
        interleaving.beforeStatus(line);
        String[] parts = line.split(" ");
        if (parts.length != 3) {
          continue;
        }
        if (parts[0].equals("B")) {
          Optional.ofNullable(from.barriers.remove(parts[1])).ifPresent(b -> b.complete(null));
          continue;
        }
        Job job = byId.get(parts[1]);
        if (job == null) {
          continue;
        }
        try {
          switch (parts[0]) {
            case "S" -> job.pid.complete(Long.parseLong(parts[2]));
            case "E" -> job.exit.complete(Integer.parseInt(parts[2]));
            default -> {}
          }
        } catch (NumberFormatException e) {
          // Not one of ours; a well-formed status line is all digits.
        }
      }
    } catch (IOException e) {
      // The zygote is gone; the next launch starts a new one.
    } finally {
      from.drained.complete(null);
    }
  }

  private void acceptLoop() {
    while (!listener.isClosed()) {
      try {
        Socket socket = listener.accept();
        threads.submit(() -> route(socket));
      } catch (IOException e) {
        if (listener.isClosed()) {
          return;
        }
      }
    }
  }

  /**
   * Reads the token line a job sends first and hands the socket to that job's handler, which then
   * reads it on this same thread (no further hand-off on the output path).
   */
  private void route(Socket socket) {
    try {
      socket.setSoTimeout((int) TOKEN_READ_TIMEOUT.toMillis());
      // "<32 hex> o\n": fixed length, so one read takes it without consuming any output.
      byte[] head = socket.getInputStream().readNBytes(TOKEN_LINE_BYTES);
      String line = new String(head, StandardCharsets.US_ASCII).strip();
      socket.setSoTimeout(0);
      int space = line.indexOf(' ');
      Job job = space < 0 ? null : byToken.get(line.substring(0, space));
      if (job == null) {
        socket.close();
        return;
      }
      switch (line.substring(space + 1)) {
        case "o" -> {
          job.stdout.complete(socket);
          interleaving.beforeOutput(Channel.STDOUT);
          job.handler.connected(Channel.STDOUT, socket);
        }
        case "e" -> {
          job.stderr.complete(socket);
          interleaving.beforeOutput(Channel.STDERR);
          job.handler.connected(Channel.STDERR, socket);
        }
        default -> socket.close();
      }
    } catch (IOException e) {
      try {
        socket.close();
      } catch (IOException ignored) {
        // Nothing more to release.
      }
    }
  }

  /** The test seam this server was started with. */
  ForkInterleaving interleaving() {
    return interleaving;
  }

  @Override
  public void close() {
    Process process;
    synchronized (this) {
      closed = true;
      process = zygote == null ? null : zygote.process;
    }
    try {
      listener.close();
    } catch (IOException e) {
      // Closing the listener only stops new jobs from connecting.
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
