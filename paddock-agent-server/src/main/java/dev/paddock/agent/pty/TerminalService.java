package dev.paddock.agent.pty;

import dev.paddock.agent.user.CommandUser;
import dev.paddock.agent.user.RunAs;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The agent's terminals: pseudo-terminals running a shell or a command as the command user, in the
 * agent's cgroup (children inherit it), with the commands' scrubbed environment. Nothing native is
 * loaded until the first terminal opens. Thread-safe.
 *
 * <p>Bounds: at most {@link #MAX_RUNNING} running terminals; ended ones stay listed (with their
 * exit code and scrollback) until deleted, at most {@link #MAX_ENDED}, the oldest forgotten first.
 */
public final class TerminalService implements AutoCloseable {
  static final int MAX_RUNNING = 32;
  static final int MAX_ENDED = 32;
  static final int SCROLLBACK_BYTES = 1 << 20;

  private final Path workspace;
  private final CommandUser user;
  private final Map<String, String> environment;
  private final Duration killGrace;
  private final Runnable activity;
  private final Map<String, Terminal> terminals = new ConcurrentHashMap<>();
  private final Object startLock = new Object();
  private volatile PtySystem system;
  private volatile boolean closed;

  /**
   * @param environment the environment commands get (keys already removed)
   * @param activity called on terminal input and output and when a terminal ends (the agent's idle
   *     tracking)
   */
  public TerminalService(
      Path workspace,
      CommandUser user,
      Map<String, String> environment,
      Duration killGrace,
      Runnable activity) {
    this.workspace = workspace;
    this.user = user;
    this.environment = Map.copyOf(environment);
    this.killGrace = killGrace;
    this.activity = activity;
  }

  /** Loads the native side on first use; see {@link PtySystems}. */
  private PtySystem system() {
    PtySystem loaded = system;
    if (loaded == null) {
      synchronized (startLock) {
        if (system == null) {
          system = PtySystems.load(Runtime.version().feature());
        }
        loaded = system;
      }
    }
    return loaded;
  }

  /**
   * Starts a terminal.
   *
   * @throws IllegalArgumentException for a bad cwd or environment
   * @throws TerminalsUnavailableException when this runtime cannot open terminals
   * @throws IllegalStateException when {@link #MAX_RUNNING} terminals are running
   */
  TerminalInfo create(TerminalRequest request) throws IOException {
    Path cwd = resolveCwd(request.cwd());
    PtySystem pty = system();
    Map<String, String> env = new LinkedHashMap<>(environment);
    env.put("TERM", "xterm-256color");
    env.remove("COLUMNS");
    env.remove("LINES");
    env.putAll(request.env());
    String id = UUID.randomUUID().toString();
    Terminal.Launch launch =
        new Terminal.Launch(
            id,
            request.command().orElse(loginShell() + " -l"),
            user.wrap(programArgv(request.command())),
            cwd,
            env,
            request.cols(),
            request.rows(),
            SCROLLBACK_BYTES,
            killGrace,
            activity);
    synchronized (startLock) {
      if (closed) {
        throw new IllegalStateException("the agent is shutting down");
      }
      if (terminals.values().stream().filter(Terminal::running).count() >= MAX_RUNNING) {
        throw new IllegalStateException(
            MAX_RUNNING + " terminals are running already; delete one first");
      }
      Terminal terminal = Terminal.start(pty, launch, Launchers.opener(), user::own);
      terminals.put(id, terminal);
      terminal
          .exit()
          .whenComplete(
              (code, e) -> {
                activity.run();
                forgetOldEnded();
              });
      activity.run();
      return terminal.info();
    }
  }

  /** {@code setsid -c} makes the child lead a new session with the terminal as its controller. */
  private List<String> programArgv(Optional<String> command) {
    List<String> argv = new ArrayList<>(List.of(Launchers.setsid(), "-c"));
    if (command.isPresent()) {
      argv.addAll(List.of(Launchers.bash(), "-c", command.get()));
    } else {
      argv.addAll(List.of(loginShell(), "-l"));
    }
    return argv;
  }

  /** The user's shell from /etc/passwd when it is a real one, else bash. */
  private String loginShell() {
    int uid = user.switchTo().map(RunAs::uid).orElseGet(Launchers::agentUid);
    return Launchers.passwdShell(uid).orElse(Launchers.bash());
  }

  private Path resolveCwd(Optional<String> cwd) {
    Path dir = cwd.map(c -> workspace.resolve(c).normalize()).orElse(workspace);
    if (!Files.isDirectory(dir)) {
      throw new IllegalArgumentException("cwd '" + dir + "' is not an existing directory");
    }
    return dir;
  }

  private void forgetOldEnded() {
    List<Terminal> ended =
        terminals.values().stream()
            .filter(t -> !t.running())
            .sorted(Comparator.comparing(t -> t.createdAt))
            .toList();
    for (int i = 0; i < ended.size() - MAX_ENDED; i++) {
      terminals.remove(ended.get(i).id);
    }
  }

  /** True while any terminal's program runs (an open shell keeps the agent busy). */
  public boolean anyRunning() {
    return terminals.values().stream().anyMatch(Terminal::running);
  }

  List<TerminalInfo> list() {
    return terminals.values().stream()
        .sorted(Comparator.comparing(t -> t.createdAt))
        .map(Terminal::info)
        .toList();
  }

  Optional<Terminal> terminal(String id) {
    return Optional.ofNullable(terminals.get(id));
  }

  /** Ends the terminal (hangup, grace, kill) and forgets it; its final state, or empty. */
  Optional<TerminalInfo> delete(String id) throws InterruptedException {
    Terminal terminal = terminals.get(id);
    if (terminal == null) {
      return Optional.empty();
    }
    terminal.terminate();
    terminals.remove(id);
    return Optional.of(terminal.info());
  }

  /** Ends every terminal: one hangup for all, one grace, then SIGKILL to what is left. */
  @Override
  public void close() {
    synchronized (startLock) {
      closed = true;
    }
    List<Terminal> live = terminals.values().stream().filter(Terminal::running).toList();
    live.forEach(Terminal::hangUp);
    try {
      long deadline = System.nanoTime() + killGrace.toNanos();
      for (Terminal t : live) {
        t.awaitExit(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
      }
      for (Terminal t : live) {
        if (t.running()) {
          t.killSession();
          t.awaitExit(Duration.ofSeconds(5));
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    terminals.clear();
  }
}
