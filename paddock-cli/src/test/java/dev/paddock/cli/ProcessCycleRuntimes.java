package dev.paddock.cli;

import dev.paddock.controlplane.CgroupRoots;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The process backend's sandboxes on this machine: processes in {@code paddock/<id>} cgroups (and
 * labelled or under the data dir, see {@link LifecycleCrashCyclesContract}), frozen when the
 * freezer cgroup says so or (signal freezer) every process is stopped, the workspace under {@code
 * <data dir>/sandboxes/<id>}, cgroups as leftovers.
 */
final class ProcessCycleRuntimes implements CycleRuntimes {
  private final ServerProcess paddock;

  ProcessCycleRuntimes(ServerProcess paddock) {
    this.paddock = paddock;
  }

  @Override
  public Map<String, String> serverSettings() {
    return Map.of("process.ready-timeout", "20s");
  }

  @Override
  public void observe() {
    // Everything is read from /proc and /sys/fs/cgroup as it is checked.
  }

  @Override
  public Optional<String> ownerByCgroup(String cgroups) {
    return LifecycleCrashCyclesContract.testIdAfter(cgroups, "/paddock/", '\n');
  }

  @Override
  public Runtime runtime(String id, List<Long> processes) throws IOException {
    Optional<String> freezer = freezerState(id);
    if (freezer.filter(s -> s.equals("FROZEN") || s.equals("1")).isPresent()) {
      return Runtime.of(State.FROZEN, "freezer " + freezer.get());
    }
    List<Character> states = new ArrayList<>();
    for (long pid : processes) {
      try {
        states.add(LifecycleCrashCyclesContract.state(pid));
      } catch (IOException e) {
        // ended since it was found (a command that finished): it runs nothing
      }
    }
    if (states.isEmpty()) {
      return Runtime.of(State.NONE, "no process");
    }
    boolean stopped = states.stream().allMatch(s -> s == 'T' || s == 't');
    String seen = "freezer " + freezer.orElse("none") + ", processes " + states;
    return Runtime.of(freezer.isEmpty() && stopped ? State.FROZEN : State.RUNS, seen);
  }

  @Override
  public Path workspaceFile(String id, String name) {
    return paddock.dataDir().resolve("sandboxes").resolve(id).resolve("workspace").resolve(name);
  }

  @Override
  public List<String> leftOf(String id) {
    List<String> left = new ArrayList<>();
    for (Path root : CgroupRoots.all()) {
      if (Files.exists(root.resolve(id))) {
        left.add("cgroup " + root.resolve(id));
      }
    }
    return left;
  }

  @Override
  public List<String> withoutASandbox(Set<String> listed, Set<String> live) throws IOException {
    List<String> left = new ArrayList<>();
    for (Path cgroup : paddock.newCgroups()) {
      if (!listed.contains(cgroup.getFileName().toString())) {
        left.add("cgroup " + cgroup);
      }
    }
    return left;
  }

  /** The sandbox's freezer state, v1 ({@code freezer.state}) or v2 ({@code cgroup.freeze}). */
  private static Optional<String> freezerState(String id) throws IOException {
    for (Path root : CgroupRoots.all()) {
      for (String file : List.of("freezer.state", "cgroup.freeze")) {
        Path state = root.resolve(id).resolve(file);
        if (Files.exists(state)) {
          return Optional.of(Files.readString(state).trim());
        }
      }
    }
    return Optional.empty();
  }
}
