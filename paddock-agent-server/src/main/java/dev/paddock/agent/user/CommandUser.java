package dev.paddock.agent.user;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Who the processes the agent starts for a user (command shells, one-shot commands, git) run as,
 * and who owns the files it writes for that user. Made once at start by {@link #prepare}; immutable
 * and thread-safe.
 *
 * <p>With {@code --run-as UID:GID} and an agent running as root, every such process is started
 * through {@code setpriv --reuid=UID --regid=GID --clear-groups --inh-caps=-all --bounding-set=-all
 * --}: no supplementary groups, no capabilities (none effective, permitted, inheritable or ambient,
 * and none in the bounding set, so no later exec can gain one). The process is then a plain
 * unprivileged user: it cannot read the agent's memory, its {@code /proc/<pid>} entries or its
 * keys. Files the agent creates on the user's behalf are chowned to UID:GID, without following
 * symbolic links (code in the sandbox may swap one in). Signals to commands still work: the agent
 * is root.
 *
 * <p>An agent that is not root cannot switch users: {@code --run-as} naming its own ids is accepted
 * and changes nothing; other ids fail at start.
 */
public final class CommandUser {
  private static final String SETPRIV = "setpriv";

  private final Optional<RunAs> switchTo;
  private final List<String> prefix;
  private final Optional<Path> home;

  private CommandUser(Optional<RunAs> switchTo, List<String> prefix, Optional<Path> home) {
    this.switchTo = switchTo;
    this.prefix = List.copyOf(prefix);
    this.home = home;
  }

  /** Commands run as the agent itself, with the agent's {@code HOME}: no switch, no chown. */
  public static CommandUser agentItself() {
    return new CommandUser(Optional.empty(), List.of(), Optional.empty());
  }

  /**
   * Checks and prepares {@code --run-as} and {@code --home} for this process: finds {@code
   * setpriv}, creates the home directory, and hands the workspace and home directories (the top
   * directory only, when root owns it) to the user.
   *
   * @param runAs the user commands run as; empty runs them as the agent
   * @param home {@code HOME} of commands, created if missing; empty keeps the agent's {@code HOME},
   *     or uses {@code workspace} when the user is switched (the agent's home is not theirs)
   * @param workspace the agent's workspace, an existing directory
   * @throws CommandUserException when the switch is impossible (not root, no setpriv) or the
   *     directories cannot be prepared
   */
  public static CommandUser prepare(Optional<RunAs> runAs, Optional<Path> home, Path workspace) {
    ProcessIds agent = ProcessIds.ofThisProcess();
    return prepare(runAs, home, workspace, agent, findOnPath(SETPRIV));
  }

  static CommandUser prepare(
      Optional<RunAs> runAs,
      Optional<Path> home,
      Path workspace,
      ProcessIds agent,
      Optional<Path> setpriv) {
    if (runAs.isEmpty() || (agent.uid() != 0 && agent.is(runAs.get()))) {
      home.ifPresent(CommandUser::createHome);
      return new CommandUser(Optional.empty(), List.of(), home);
    }
    RunAs user = runAs.get();
    if (agent.uid() != 0) {
      throw new CommandUserException(
          "--run-as "
              + user
              + " needs the agent to run as root, but it runs as uid "
              + agent.uid()
              + " gid "
              + agent.gid()
              + "; start it as root, or give --run-as "
              + agent.uid()
              + ":"
              + agent.gid()
              + " (or no --run-as)");
    }
    Path program =
        setpriv.orElseThrow(
            () ->
                new CommandUserException(
                    "--run-as "
                        + user
                        + " needs 'setpriv' (util-linux) on PATH, and it was not found; install"
                        + " util-linux in the image or drop --run-as"));
    CommandUser prepared =
        new CommandUser(
            runAs, setprivArgv(program, user), Optional.of(home.orElse(workspace).normalize()));
    prepared.handOver(workspace);
    prepared.home.ifPresent(
        dir -> {
          createHome(dir);
          prepared.handOver(dir);
        });
    return prepared;
  }

  private static List<String> setprivArgv(Path setpriv, RunAs user) {
    return List.of(
        setpriv.toString(),
        "--reuid=" + user.uid(),
        "--regid=" + user.gid(),
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--");
  }

  /** Gives a root-owned directory to the user (the directory only, not its contents). */
  private void handOver(Path dir) {
    try {
      if (((Integer) Files.getAttribute(dir, "unix:uid")) == 0) {
        own(dir.toRealPath());
      }
    } catch (IOException e) {
      throw new CommandUserException(
          "cannot hand " + dir + " over to the command user " + switchTo.orElseThrow() + ": " + e,
          e);
    }
  }

  private static void createHome(Path dir) {
    try {
      Files.createDirectories(dir);
    } catch (IOException e) {
      throw new CommandUserException("cannot create the commands' home " + dir + ": " + e, e);
    }
  }

  /** The user commands are switched to; empty when they run as the agent. */
  public Optional<RunAs> switchTo() {
    return switchTo;
  }

  /** {@code argv} preceded by the user switch, if any. */
  public List<String> wrap(List<String> argv) {
    List<String> wrapped = new ArrayList<>(prefix.size() + argv.size());
    wrapped.addAll(prefix);
    wrapped.addAll(argv);
    return wrapped;
  }

  /** {@code base} with {@code HOME} set to the commands' home, when one is configured. */
  public Map<String, String> environment(Map<String, String> base) {
    Map<String, String> env = new LinkedHashMap<>(base);
    home.ifPresent(h -> env.put("HOME", h.toString()));
    return env;
  }

  /**
   * Makes the user own {@code path} (never a link's target: a link is changed itself). Does nothing
   * when commands run as the agent.
   */
  public void own(Path path) throws IOException {
    if (switchTo.isPresent()) {
      Files.setAttribute(path, "unix:uid", switchTo.get().uid(), LinkOption.NOFOLLOW_LINKS);
      Files.setAttribute(path, "unix:gid", switchTo.get().gid(), LinkOption.NOFOLLOW_LINKS);
    }
  }

  /**
   * {@code mkdir -p} whose new directories the user owns; directories that existed are left as they
   * are.
   */
  public void createDirectories(Path dir) throws IOException {
    List<Path> missing = new ArrayList<>();
    for (Path p = dir;
        p != null && Files.notExists(p, LinkOption.NOFOLLOW_LINKS);
        p = p.getParent()) {
      missing.addFirst(p);
    }
    Files.createDirectories(dir);
    for (Path created : missing) {
      own(created);
    }
  }

  /**
   * The system directories first: the agent may run as root, and a directory on PATH may be
   * writable by the user commands run as (a planted {@code setpriv} would run as root).
   */
  private static Optional<Path> findOnPath(String name) {
    String path = System.getenv().getOrDefault("PATH", "/usr/local/bin:/usr/bin:/bin");
    for (String dir : ("/usr/bin:/bin:/usr/sbin:/sbin:" + path).split(":")) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, name))) {
        return Optional.of(Path.of(dir, name));
      }
    }
    return Optional.empty();
  }
}
