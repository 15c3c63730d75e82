package dev.paddock.agent.bash;

import dev.paddock.agent.core.Signal;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Signals and stops whole process trees. A command is started as the leader of its own process
 * group (through {@code setsid}), so a group signal reaches its children, grandchildren and
 * background jobs; descendants that moved to another group are signalled one by one as well.
 *
 * <p>Java cannot signal a process group, so group signals go through {@code kill(1)}; that costs a
 * fork but only on timeout, interrupt or explicit signal, never on the normal path.
 */
final class ProcessTree {
  private static final Optional<String> SETSID = findOnPath("setsid");
  private static final String KILL = findOnPath("kill").orElse("kill");

  private ProcessTree() {}

  /** The argv prefix that makes a new session (and process group) for a command, if available. */
  static List<String> newSessionPrefix() {
    return SETSID.map(List::of).orElse(List.of());
  }

  static boolean hasOwnGroup() {
    return SETSID.isPresent();
  }

  /**
   * Sends {@code signal} to the group led by {@code leader} (when it leads one) and to every
   * descendant. Never throws for processes that are already gone.
   */
  static void signal(ProcessHandle leader, boolean leaderOwnsGroup, String signal) {
    List<ProcessHandle> targets = new ArrayList<>();
    targets.add(leader);
    leader.descendants().forEach(targets::add);
    send(signal, leaderOwnsGroup ? leader.pid() : 0, targets);
  }

  /** Sends {@code signal} only to the descendants of {@code parent} (a shell that must survive). */
  static void signalDescendants(ProcessHandle parent, String signal) {
    List<ProcessHandle> targets = parent.descendants().filter(ProcessHandle::isAlive).toList();
    if (!targets.isEmpty()) {
      send(signal, 0, targets);
    }
  }

  /**
   * Stops a tree: SIGTERM to the group and every descendant, up to {@code grace} for them to exit,
   * then SIGKILL to whatever is left (including descendants that were re-parented meanwhile).
   */
  static void terminate(ProcessHandle leader, boolean leaderOwnsGroup, Duration grace)
      throws InterruptedException {
    List<ProcessHandle> tree = new ArrayList<>();
    tree.add(leader);
    leader.descendants().forEach(tree::add);
    signal(leader, leaderOwnsGroup, "TERM");
    // Polled rather than ProcessHandle.onExit(): that starts a waiter thread per process, which
    // fails (OutOfMemoryError) exactly when a fork bomb has used up the pids limit.
    long deadline = System.nanoTime() + grace.toNanos();
    while (System.nanoTime() - deadline < 0 && tree.stream().anyMatch(ProcessHandle::isAlive)) {
      Thread.sleep(EXIT_POLL_MILLIS);
    }
    leader.descendants().forEach(tree::add);
    List<ProcessHandle> left = tree.stream().filter(ProcessHandle::isAlive).toList();
    if (leaderOwnsGroup) {
      killGroup(leader.pid(), left);
    } else if (!left.isEmpty()) {
      send("KILL", 0, left);
    }
  }

  /**
   * SIGKILL to the group (and {@code targets}), repeated until no live member is left or {@link
   * #KILL_SETTLE} has passed: a group whose members are forking while the pids limit is exhausted
   * may need several passes when {@code kill(1)} cannot be started and members are signalled one by
   * one.
   */
  private static void killGroup(long group, List<ProcessHandle> targets)
      throws InterruptedException {
    send("KILL", group, targets);
    long deadline = System.nanoTime() + KILL_SETTLE.toNanos();
    List<ProcessHandle> left = groupMembers(group);
    while (!left.isEmpty() && System.nanoTime() - deadline < 0) {
      Thread.sleep(EXIT_POLL_MILLIS);
      left = groupMembers(group);
      if (!left.isEmpty()) {
        send("KILL", group, left);
      }
    }
  }

  /**
   * Sends {@code signal} to process group {@code group} and the descendants of its leader; when the
   * leader has exited, to the group's remaining members.
   */
  static void signalGroup(long group, String signal) {
    Optional<ProcessHandle> leader = ProcessHandle.of(group);
    if (leader.isPresent()) {
      signal(leader.get(), true, signal);
    } else {
      List<ProcessHandle> members = groupMembers(group);
      if (!members.isEmpty()) {
        send(signal, group, members);
      }
    }
  }

  /**
   * Stops process group {@code group} like {@link #terminate}; when its leader has already exited
   * (the group lives on in its other members), TERM, up to {@code grace}, then KILL go to the
   * group.
   */
  static void terminateGroup(long group, Duration grace) throws InterruptedException {
    Optional<ProcessHandle> leader = ProcessHandle.of(group);
    if (leader.isPresent()) {
      terminate(leader.get(), true, grace);
      return;
    }
    List<ProcessHandle> members = groupMembers(group);
    if (members.isEmpty()) {
      return;
    }
    send("TERM", group, members);
    long deadline = System.nanoTime() + grace.toNanos();
    while (System.nanoTime() - deadline < 0 && !groupMembers(group).isEmpty()) {
      Thread.sleep(EXIT_POLL_MILLIS);
    }
    members = groupMembers(group);
    if (!members.isEmpty()) {
      killGroup(group, members);
    }
  }

  /** The kill(1) name of the signal {@code name} means, or empty if it is not one clients send. */
  static Optional<String> normaliseSignal(String name) {
    return Signal.parse(name).map(Signal::name);
  }

  /**
   * Sends {@code signal} to the process group {@code group} (0: none) and to {@code targets}
   * through kill(1). When no process can be started, because the sandbox's pids limit is exhausted
   * (a fork bomb), TERM and KILL are sent directly instead, which needs no fork: to the targets, to
   * every process in the group, and again while the group still has members.
   */
  private static void send(String signal, long group, List<ProcessHandle> targets) {
    List<String> argv = new ArrayList<>(List.of(KILL, "-s", signal, "--"));
    if (group > 0) {
      argv.add("-" + group);
    }
    for (ProcessHandle p : targets) {
      if (p.isAlive()) {
        argv.add(Long.toString(p.pid()));
      }
    }
    if (argv.size() == 4) {
      return;
    }
    try {
      runKill(argv);
    } catch (IOException e) {
      if (!signal.equals("KILL") && !signal.equals("TERM")) {
        throw new IllegalStateException("cannot run " + KILL + ": " + e.getMessage(), e);
      }
      signalWithoutFork(signal.equals("KILL"), group, targets);
    }
  }

  /**
   * Runs kill(1) with {@code argv} and waits (bounded) for it.
   *
   * @throws IOException when it cannot be started (e.g. the pids limit is exhausted)
   */
  private static void runKill(List<String> argv) throws IOException {
    Process kill;
    try {
      kill =
          new ProcessBuilder(argv)
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
    } catch (OutOfMemoryError e) {
      // With the pids limit all but used up the fork itself may get the last pid while the JVM's
      // "process reaper" thread for it does not (pthread_create: EAGAIN): start() then throws
      // this, not an IOException, and the caller's fork-free fallback must still run (else the
      // timed-out command is never stopped and never answers).
      throw new IOException("cannot start kill(1): " + e.getMessage(), e);
    }
    try {
      kill.waitFor(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static final int DIRECT_ROUNDS = 200;
  private static final long EXIT_POLL_MILLIS = 10;
  private static final Duration KILL_SETTLE = Duration.ofSeconds(10);

  private static void signalWithoutFork(boolean kill, long group, List<ProcessHandle> targets) {
    targets.forEach(p -> destroy(p, kill));
    if (group <= 0) {
      return;
    }
    for (int round = 0; round < DIRECT_ROUNDS; round++) {
      List<ProcessHandle> members = groupMembers(group);
      if (members.isEmpty() || !kill && round > 0) {
        return;
      }
      members.forEach(p -> destroy(p, kill));
      if (kill && groupKillByKill1(group)) {
        return; // the pids those kills freed let kill(1) start: one atomic group kill
      }
    }
  }

  /** {@code kill -s KILL -- -group} through kill(1); false when it cannot be started. */
  private static boolean groupKillByKill1(long group) {
    try {
      runKill(List.of(KILL, "-s", "KILL", "--", "-" + group));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static void destroy(ProcessHandle p, boolean kill) {
    try {
      if (kill) {
        p.destroyForcibly();
      } else {
        p.destroy();
      }
    } catch (IllegalStateException | SecurityException e) {
      // Gone, or this very process: nothing to signal.
    }
  }

  /** Live processes whose process group is {@code group}, read from /proc (no fork). */
  static List<ProcessHandle> groupMembers(long group) {
    List<ProcessHandle> members = new ArrayList<>();
    try (java.nio.file.DirectoryStream<Path> procs =
        Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
      for (Path proc : procs) {
        try {
          String stat = Files.readString(proc.resolve("stat"));
          // pid (comm) state ppid pgrp ...: comm may hold spaces and parentheses.
          String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
          if (Long.parseLong(fields[2]) == group && !fields[0].equals("Z")) {
            ProcessHandle.of(Long.parseLong(proc.getFileName().toString())).ifPresent(members::add);
          }
        } catch (IOException | RuntimeException e) {
          // It exited while we looked.
        }
      }
    } catch (IOException e) {
      return members;
    }
    return members;
  }

  /**
   * System directories first: the agent may run as root, and a directory on PATH may be writable by
   * the user commands run as (a planted {@code kill} would run as root on the next timeout).
   */
  static Optional<String> findOnPath(String name) {
    String path = System.getenv().getOrDefault("PATH", "/usr/local/bin:/usr/bin:/bin");
    for (String dir : ("/usr/bin:/bin:/usr/sbin:/sbin:" + path).split(":")) {
      if (dir.isEmpty()) {
        continue;
      }
      Path candidate = Path.of(dir, name);
      if (Files.isExecutable(candidate)) {
        return Optional.of(candidate.toString());
      }
    }
    return Optional.empty();
  }
}
