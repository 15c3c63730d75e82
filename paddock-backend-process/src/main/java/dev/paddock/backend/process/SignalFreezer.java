package dev.paddock.backend.process;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The fallback when no cgroup freezer is usable (not root, no delegation): SIGSTOP to every process
 * of the sandbox, the agent first so it starts nothing new, then its descendants and every process
 * labelled with the sandbox id (which catches commands that left the tree). Rescans until a scan
 * finds nothing new, since a process may fork between a scan and its signal. Weaker than a cgroup:
 * a process that dropped the label and left the tree escapes; a stopped process can be continued by
 * anyone who may signal it.
 */
final class SignalFreezer implements Freezer {
  static final String KIND = "signals";
  private static final Duration SETTLE = Duration.ofSeconds(10);
  private static final int MAX_ROUNDS = 20;

  private final long agentPid;
  private final long agentStartTime;
  private final String sandboxId;
  private final ProcFs procFs;
  private final Signals signals;

  SignalFreezer(
      long agentPid, long agentStartTime, String sandboxId, ProcFs procFs, Signals signals) {
    this.agentPid = agentPid;
    this.agentStartTime = agentStartTime;
    this.sandboxId = sandboxId;
    this.procFs = procFs;
    this.signals = signals;
  }

  @Override
  public String kind() {
    return KIND;
  }

  @Override
  public Optional<Path> cgroup() {
    return Optional.empty();
  }

  @Override
  public void attach(long pid) {
    // Nothing to join: members are found by parentage and label.
  }

  @Override
  public void freeze() {
    Set<Long> stopped = new LinkedHashSet<>();
    for (int round = 0; round < MAX_ROUNDS; round++) {
      List<Long> fresh = new ArrayList<>(members());
      fresh.removeAll(stopped);
      if (fresh.isEmpty()) {
        break;
      }
      signals.stop(fresh);
      stopped.addAll(fresh);
    }
    if (!Poll.until(this::allStopped, SETTLE)) {
      throw new IllegalStateException("sandbox " + sandboxId + " did not stop in " + SETTLE);
    }
  }

  private boolean allStopped() {
    return members().stream()
        .allMatch(pid -> procFs.stat(pid).map(s -> s.stopped() || !s.alive()).orElse(true));
  }

  @Override
  public void thaw() {
    // Children first, the agent last: by the time it runs again, its commands are running too.
    List<Long> all = new ArrayList<>(members());
    java.util.Collections.reverse(all);
    signals.resume(all);
    if (!Poll.until(() -> !frozen(), SETTLE)) {
      throw new IllegalStateException("sandbox " + sandboxId + " did not continue in " + SETTLE);
    }
  }

  @Override
  public boolean frozen() {
    return procFs
        .stat(agentPid)
        .filter(s -> s.startTime() == agentStartTime && s.alive() && s.stopped())
        .isPresent();
  }

  /** The agent (if it is still the same process), its descendants, then labelled processes. */
  @Override
  public List<Long> members() {
    Set<Long> pids = new LinkedHashSet<>();
    if (procFs.isAlive(agentPid, agentStartTime)) {
      pids.add(agentPid);
      pids.addAll(procFs.descendants(agentPid));
    }
    pids.addAll(procFs.labelled(sandboxId));
    return List.copyOf(pids);
  }

  @Override
  public void killAll() {
    // SIGKILL takes stopped processes too; no need to continue them first.
    signals.kill(members());
    if (!Poll.until(() -> members().isEmpty(), SETTLE)) {
      throw new IllegalStateException("processes of " + sandboxId + " left: " + members());
    }
  }

  @Override
  public void remove() {
    // No cgroup.
  }
}
