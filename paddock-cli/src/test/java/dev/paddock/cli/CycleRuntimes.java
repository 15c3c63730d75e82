package dev.paddock.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * What {@link LifecycleCrashCyclesContract} needs to see of one backend's sandboxes on this
 * machine, without asking the control plane: what runs of a sandbox (its processes, its container),
 * whether it is frozen, where its counter file is, and what it could leave behind (cgroups,
 * containers, volumes). Read from the machine itself ({@code /proc}, {@code /sys/fs/cgroup}, the
 * engine), so a runtime the control plane lost track of is seen too.
 */
interface CycleRuntimes {
  /** {@code paddock server}'s settings for this backend (the cycles add their own). */
  Map<String, String> serverSettings();

  /**
   * Takes what the next checks read (for Docker: one container and one volume listing), once the
   * sandboxes settled; nothing changes them until the next kill.
   */
  void observe() throws IOException;

  /**
   * The sandbox id of the test's that a process with this {@code /proc/<pid>/cgroup} belongs to by
   * its cgroup (the process backend's {@code paddock/<id>}, a Docker container's {@code
   * docker/<container id>}); empty when its cgroup names none.
   */
  Optional<String> ownerByCgroup(String cgroups);

  /** What runs of {@code id} now; {@code processes} are those of it found on the machine. */
  Runtime runtime(String id, List<Long> processes) throws IOException;

  /** Where the file {@code name} in the sandbox's workspace is on this machine. */
  Path workspaceFile(String id, String name) throws IOException;

  /**
   * What the backend made for {@code id} besides processes and its {@code <data dir>/sandboxes}
   * directory (cgroups; a container, its volume and its cgroups), described one per entry; empty
   * when nothing of it is left.
   */
  List<String> leftOf(String id) throws IOException;

  /**
   * What the backend made for a sandbox the control plane does not list (cgroups; containers and
   * volumes by label), or that runs for one that is neither RUNNING nor PAUSED; empty when none.
   *
   * @param listed every listed sandbox
   * @param live the listed RUNNING and PAUSED ones
   */
  List<String> withoutASandbox(Set<String> listed, Set<String> live) throws IOException;

  /** What runs of a sandbox, as the machine shows it. */
  record Runtime(State state, String seen) {
    static Runtime of(State state, String seen) {
      return new Runtime(state, seen);
    }
  }

  /** Nothing runs; something runs and is not frozen; it is frozen (or stopped for a pause). */
  enum State {
    NONE,
    RUNS,
    FROZEN,
    /** Anything else: half made, stopped, several runtimes. Never a true state here. */
    OTHER
  }
}
