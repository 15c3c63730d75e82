package dev.paddock.agent.bash;

import static java.nio.charset.StandardCharsets.UTF_8;

import dev.paddock.agent.core.AgentConfig;
import dev.paddock.agent.user.CommandUser;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * Runs commands (one-shot or in named sessions), keeps their bounded event history, and gives live
 * access to running ones. Thread-safe.
 *
 * <p>Threads: one cached pool of small platform threads runs the pumps (two per running command or
 * session) and watchers (one per running command). Platform rather than virtual threads: pipe reads
 * block in the kernel and would pin a carrier each anyway.
 */
public final class BashService implements AutoCloseable {
  /** Variables never passed to commands: the agent's own keys and secrets. */
  private static final Pattern SECRET_NAMES =
      Pattern.compile(
          "SESSION_API_KEY|OH_SESSION_API_KEYS_\\d+|OH_SECRET_KEY|PADDOCK_.*(KEY|SECRET|TOKEN).*");

  private static final Pattern SESSION_NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,63}");

  /** What a session name must look like, as told to clients. */
  public static final String SESSION_NAME_RULE =
      "session name must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit";

  private final AgentConfig config;
  private final EventLog log;
  private final Map<String, CommandRecord> commands = new ConcurrentHashMap<>();
  private final Map<String, ShellSession> sessions = new ConcurrentHashMap<>();

  /**
   * Spool bytes of finished commands still in the history (running ones are bounded by the cap).
   */
  private final java.util.concurrent.atomic.AtomicLong spooledBytes =
      new java.util.concurrent.atomic.AtomicLong();

  private final Map<String, String> environment;
  private final ExecutorService threads;
  private final Optional<ForkServer> forkServer;
  private final List<String> launchPrefix;
  private final OomKillCounter oomKills;
  private final Runnable onCommandEnd;

  /**
   * @param user who commands run as (prepared from {@code config}; see {@link CommandUser#prepare})
   */
  public BashService(AgentConfig config, CommandUser user) {
    this(config, user, Map.of());
  }

  /**
   * @param user who commands run as (prepared from {@code config}; see {@link CommandUser#prepare})
   * @param agentVariables variables telling commands about their agent ({@code PADDOCK_AGENT_URL},
   *     {@code SANDBOX_ID}); never a key
   */
  public BashService(AgentConfig config, CommandUser user, Map<String, String> agentVariables) {
    this(config, user, agentVariables, () -> {});
  }

  /**
   * @param user who commands run as (prepared from {@code config}; see {@link CommandUser#prepare})
   * @param agentVariables variables telling commands about their agent ({@code PADDOCK_AGENT_URL},
   *     {@code SANDBOX_ID}); never a key
   * @param onCommandEnd called when any command ends (the agent's idle clock starts then), on the
   *     thread that finished it; must not block
   */
  public BashService(
      AgentConfig config,
      CommandUser user,
      Map<String, String> agentVariables,
      Runnable onCommandEnd) {
    this(config, user, agentVariables, onCommandEnd, ForkInterleaving.NONE);
  }

  /** As the public constructors, with a test's {@code interleaving} of forked commands. */
  BashService(
      AgentConfig config,
      CommandUser user,
      Map<String, String> agentVariables,
      Runnable onCommandEnd,
      ForkInterleaving interleaving) {
    this.onCommandEnd = onCommandEnd;
    this.config = config;
    this.log = new EventLog(config.maxEvents(), config.maxEventAge());
    Map<String, String> env = commandEnvironment(System.getenv());
    env.putAll(agentVariables);
    this.environment = user.environment(env);
    // The user switch, then setsid: both exec, so the shell keeps the pid the JVM started.
    this.launchPrefix = user.wrap(ProcessTree.newSessionPrefix());
    this.oomKills =
        config.oomCounterFile().map(OomKillCounter::at).orElseGet(OomKillCounter::ofThisProcess);
    this.threads = Executors.newCachedThreadPool(daemonThreads());
    this.forkServer =
        config.forkServer()
            ? ForkServer.start(
                threads,
                launchPrefix,
                config.workspace(),
                environment,
                config.killGrace(),
                interleaving)
            : Optional.empty();
  }

  private static ThreadFactory daemonThreads() {
    AtomicInteger n = new AtomicInteger();
    return task -> {
      Thread t = new Thread(null, task, "paddock-bash-" + n.incrementAndGet(), 256 << 10);
      t.setDaemon(true);
      return t;
    };
  }

  /**
   * Starts the fork server's shell in the background. Called once the agent is serving, so that
   * spawning the first process is not on the start-up path.
   */
  public void warmUp() {
    forkServer.ifPresent(f -> threads.submit(f::warmUp));
  }

  /** The environment commands get: the agent's own, less every key and secret. */
  public static Map<String, String> commandEnvironment(Map<String, String> agentEnvironment) {
    Map<String, String> env = new LinkedHashMap<>();
    agentEnvironment.forEach(
        (name, value) -> {
          if (!SECRET_NAMES.matcher(name).matches()) {
            env.put(name, value);
          }
        });
    env.put("PADDOCK_SANDBOX", "1");
    return env;
  }

  /** Starts a command and returns its record at once (a BashCommand event is logged). */
  CommandRecord start(CommandRequest request, Optional<OutputListener> listener) {
    return start(request, listener, false);
  }

  /**
   * Starts a command as {@link #start(CommandRequest, Optional)} does; when {@code pinned}, its
   * spool files outlive the retention bounds until {@link #unpin}, for a caller that reads the
   * whole output once the command has ended.
   */
  CommandRecord start(CommandRequest request, Optional<OutputListener> listener, boolean pinned) {
    Optional<Path> cwd = resolveCwd(request.cwd());
    // Checked before the session is looked up, so a refused request creates no session.
    if (request.session().isPresent() && (request.stdin() || !request.env().isEmpty())) {
      throw new IllegalArgumentException(
          "'stdin' and 'env' apply to one-shot commands only; a session keeps its own environment");
    }
    ShellSession session = request.session().map(this::session).orElse(null);
    String id = UUID.randomUUID().toString();
    CommandRecord record =
        new CommandRecord(
            id,
            request.command(),
            request.cwd(),
            request.timeoutSeconds(),
            request.session(),
            config.eventsDir(),
            eventCapBytes(),
            log,
            oomKills,
            // Released while output flows, so a long chatty command cannot grow the history (and
            // its own event list) past the bounds before it ends.
            this::prune);
    if (pinned) {
      record.pin();
    }
    listener.ifPresent(record.listeners::add);
    commands.put(id, record);
    log.add(new BashEvent.Command(record));
    record.result.whenComplete(
        (r, e) -> {
          onCommandEnd.run();
          spooledBytes.addAndGet(record.spoolBytes());
          prune();
        });
    if (cwd.isEmpty()) {
      // In band, as OpenHands reports a command's own bad input: the client reads why in stderr.
      String reason = "cwd '" + request.cwd().orElse("") + "' is not an existing directory";
      byte[] message = ("Error executing command: " + reason + "\n").getBytes(UTF_8);
      record.append(Channel.STDERR, message, 0, message.length);
      record.finish(CommandResult.notRun(reason, 0));
    } else if (session != null) {
      // The resolved directory: a relative cwd names a workspace path, not one under the shell's
      // current directory.
      session.submit(record, request.cwd().map(c -> cwd.get()));
    } else {
      boolean forked =
          forkServer.isPresent()
              && ForkedCommand.start(
                  record,
                  cwd.get(),
                  request.env(),
                  request.stdin(),
                  config.killGrace(),
                  threads,
                  forkServer.get());
      if (!forked) {
        Map<String, String> env = new LinkedHashMap<>(environment);
        env.putAll(request.env());
        OneShotCommand.start(
            record, launchPrefix, cwd.get(), env, request.stdin(), config.killGrace(), threads);
      }
    }
    // Only now: the id the listener announces must already take stdin and signals.
    listener.ifPresent(l -> begin(record, l));
    return record;
  }

  private static void begin(CommandRecord record, OutputListener listener) {
    try {
      listener.begin(record.id);
    } catch (Exception e) {
      // The client went away before it learnt the id: the command runs on, as after a disconnect.
      record.listeners.remove(listener);
    }
  }

  /** Ends a pin taken by {@link #start(CommandRequest, Optional, boolean)}. */
  void unpin(CommandRecord record) {
    record.unpin();
    if (record.forgotten()) {
      commands.remove(record.id);
      record.deleteSpool();
    }
  }

  /** The directory a command runs in; empty when it names no existing directory. */
  private Optional<Path> resolveCwd(Optional<String> cwd) {
    try {
      Path dir = cwd.map(c -> config.workspace().resolve(c).normalize()).orElse(config.workspace());
      return Files.isDirectory(dir) ? Optional.of(dir) : Optional.empty();
    } catch (java.nio.file.InvalidPathException e) {
      return Optional.empty();
    }
  }

  /**
   * The cap on each stream kept for a command's events: half the spool bound (so the end of a
   * command that reached it is still in the history for its pollers), at least the reply cap.
   */
  private long eventCapBytes() {
    return Math.max(config.outputCapBytes(), config.maxSpoolBytes() / 2);
  }

  /** The cap on each stream of an {@code execute_bash_command} reply. */
  long replyCapBytes() {
    return config.outputCapBytes();
  }

  /** A running or finished command still in the history. */
  Optional<CommandRecord> command(String id) {
    return Optional.ofNullable(commands.get(id));
  }

  /** True while any command (one-shot or in a session) runs. */
  public boolean anyRunning() {
    return commands.values().stream().anyMatch(CommandRecord::running);
  }

  List<CommandRecord> running() {
    return commands.values().stream()
        .filter(CommandRecord::running)
        .sorted(Comparator.comparing(r -> r.timestamp))
        .toList();
  }

  /** The session named {@code name}, created on first use. */
  public ShellSessionInfo openSession(String name) {
    return describe(session(name));
  }

  /** True when {@code name} may name a session; see {@link #SESSION_NAME_RULE}. */
  public static boolean validSessionName(String name) {
    return SESSION_NAME.matcher(name).matches();
  }

  private ShellSession session(String name) {
    if (!validSessionName(name)) {
      throw new IllegalArgumentException(SESSION_NAME_RULE);
    }
    return sessions.computeIfAbsent(
        name,
        n ->
            new ShellSession(
                n, launchPrefix, config.workspace(), environment, config.killGrace(), threads));
  }

  public List<ShellSessionInfo> sessions() {
    return sessions.values().stream()
        .sorted(Comparator.comparing(s -> s.created))
        .map(BashService::describe)
        .toList();
  }

  public Optional<ShellSessionInfo> sessionInfo(String name) {
    return Optional.ofNullable(sessions.get(name)).map(BashService::describe);
  }

  /** Ends a session's shell and forgets it; false when there was none. */
  public boolean closeSession(String name) {
    ShellSession session = sessions.remove(name);
    if (session == null) {
      return false;
    }
    session.close();
    return true;
  }

  private static ShellSessionInfo describe(ShellSession s) {
    return new ShellSessionInfo(s.name, s.created, s.pid(), s.busy(), s.commandCount());
  }

  Optional<BashEvent> event(String id) {
    prune();
    return log.get(id);
  }

  /** A reader of the history from a position on (see {@link EventFeed}). */
  EventFeed feed() {
    return new EventFeed(log);
  }

  /** One page of the history. */
  EventLog.Page search(
      Predicate<BashEvent> filter, boolean descending, Optional<String> pageId, int limit) {
    prune();
    return log.page(filter, descending, pageId, limit);
  }

  /** Drops the history of finished commands; returns how many events went. */
  int clearHistory() {
    List<BashEvent> dropped = log.removeIf(e -> !e.command().running());
    release(dropped);
    return dropped.size();
  }

  /** The environment commands (and terminals) start with: no keys, {@code HOME} set. */
  public Map<String, String> environment() {
    return environment;
  }

  public int eventCount() {
    return log.size();
  }

  /** Applies the retention bounds (count, age, spool bytes). Cheap when nothing is due. */
  public void prune() {
    release(log.prune());
    long total = spooledBytes.get();
    if (total <= config.maxSpoolBytes()) {
      return;
    }
    List<CommandRecord> oldestFirst =
        commands.values().stream()
            .filter(r -> !r.running())
            .sorted(Comparator.comparing(r -> r.timestamp))
            .toList();
    for (CommandRecord record : oldestFirst) {
      if (total <= config.maxSpoolBytes()) {
        break;
      }
      total -= record.spoolBytes();
      release(log.removeIf(e -> e.command() == record));
    }
  }

  private void release(Collection<BashEvent> dropped) {
    for (BashEvent event : dropped) {
      CommandRecord record = event.command();
      record.forget(event);
      if (record.forgotten() && commands.remove(record.id) != null) {
        spooledBytes.addAndGet(-record.spoolBytes());
        record.deleteSpool();
      }
    }
  }

  /** Stops every running command and session and deletes the spool directory. */
  @Override
  public void close() {
    forkServer.ifPresent(ForkServer::close);
    for (ShellSession session : sessions.values()) {
      session.close();
    }
    sessions.clear();
    List<CommandRecord> live = new ArrayList<>(commands.values());
    for (CommandRecord record : live) {
      if (record.running()) {
        record.control().ifPresent(c -> c.stop(config.killGrace()));
      }
    }
    threads.shutdown();
    try {
      threads.awaitTermination(
          config.killGrace().toMillis() + 1000, java.util.concurrent.TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    threads.shutdownNow();
    deleteTree(config.eventsDir());
  }

  private static void deleteTree(Path dir) {
    if (!Files.exists(dir)) {
      return;
    }
    try (var paths = Files.walk(dir)) {
      paths
          .sorted(Comparator.reverseOrder())
          .forEach(
              p -> {
                try {
                  Files.deleteIfExists(p);
                } catch (IOException e) {
                  // Best effort at shutdown.
                }
              });
    } catch (IOException e) {
      // Best effort at shutdown.
    }
  }

  /** A session as the API shows it. */
  public record ShellSessionInfo(
      String name, Instant createdAt, Optional<Long> pid, boolean busy, int commandCount) {}
}
