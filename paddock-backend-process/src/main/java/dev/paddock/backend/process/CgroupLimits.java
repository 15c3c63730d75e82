package dev.paddock.backend.process;

import dev.paddock.api.Resources;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Applies a sandbox's memory, pids and CPU limits through cgroups, where the host allows: per
 * controller, a v1 hierarchy of its own ({@code <mount>/<own cgroup>/paddock/<id>}, next to the v1
 * freezer's) when one is mounted and writable, else the unified v2 hierarchy ({@code <cgroup2
 * mount>/<own cgroup>/paddock/<id>}, the v2 freezer's cgroup), enabling the controller in {@code
 * cgroup.subtree_control} on the way when it is not yet. Limits are written before the agent is
 * moved in, so everything it forks is limited. A limit this host cannot enforce (no controller, no
 * rights, a value the kernel refuses) does not fail the start: it is reported as unenforced and the
 * reason logged. Detection runs once per backend; instances are immutable and thread-safe.
 */
final class CgroupLimits {
  static final String MEMORY = "memory";
  static final String PIDS = "pids";
  static final String CPUS = "cpus";
  static final String DISK = "disk";

  private static final System.Logger LOG = System.getLogger("paddock.backend.process");
  private static final long CPU_PERIOD_US = 100_000;

  /** The kernel controller behind each limit, and the v1 file that shows it is usable. */
  private static final Map<String, String> CONTROLLERS =
      Map.of(MEMORY, "memory", PIDS, "pids", CPUS, "cpu");

  private static final Map<String, String> V1_PROBE =
      Map.of("memory", "memory.limit_in_bytes", "pids", "pids.max", "cpu", "cpu.cfs_quota_us");

  /** Controller to {@code .../paddock} base of a usable v1 hierarchy. */
  private final Map<String, Path> v1;

  /** The v2 {@code .../paddock} base, with the controllers its children have. */
  private final Optional<Path> v2;

  private final Set<String> v2Controllers;

  private CgroupLimits(Map<String, Path> v1, Optional<Path> v2, Set<String> v2Controllers) {
    this.v1 = Map.copyOf(v1);
    this.v2 = v2;
    this.v2Controllers = Set.copyOf(v2Controllers);
  }

  /**
   * The limits with every hierarchy this host offers Paddock.
   *
   * @param allowed whether cgroups may be used at all ({@code process.freezer=signals} says no)
   */
  static CgroupLimits detect(boolean allowed) {
    if (!allowed) {
      return new CgroupLimits(Map.of(), Optional.empty(), Set.of());
    }
    Map<String, Path> v1 = new LinkedHashMap<>();
    for (String controller : List.of("memory", "pids", "cpu")) {
      Freezers.CgroupHierarchy.v1(controller)
          .flatMap(dir -> usable(dir, V1_PROBE.get(controller)))
          .ifPresent(base -> v1.put(controller, base));
    }
    Optional<Path> v2 = Freezers.CgroupHierarchy.v2().flatMap(dir -> usable(dir, "cgroup.procs"));
    Set<String> enabled = new LinkedHashSet<>();
    v2.ifPresent(
        base -> {
          for (String controller : List.of("memory", "pids", "cpu")) {
            if (!v1.containsKey(controller) && enable(base, controller)) {
              enabled.add(controller);
            }
          }
        });
    CgroupLimits limits = new CgroupLimits(v1, v2, enabled);
    LOG.log(
        System.Logger.Level.DEBUG,
        "process backend: limits through v1 {0}, v2 {1}",
        v1.keySet(),
        enabled);
    return limits;
  }

  /** What apply made and could not do. */
  record Applied(List<Path> cgroups, List<String> unenforced) {
    static final Applied NOTHING = new Applied(List.of(), List.of());

    Applied {
      cgroups = List.copyOf(cgroups);
      unenforced = List.copyOf(unenforced);
    }
  }

  /**
   * Creates the sandbox's limit cgroups, writes its limits and moves {@code pid} in. Never throws
   * for what the host cannot do: those limits come back as unenforced.
   */
  Applied apply(String sandboxId, long pid, Resources resources) {
    Map<String, String> wanted = wanted(resources);
    List<String> unenforced = new ArrayList<>();
    if (resources.diskBytes().isPresent()) {
      unenforced.add(DISK);
      LOG.log(
          System.Logger.Level.WARNING,
          "sandbox {0}: the process backend cannot limit disk; it runs without that limit",
          sandboxId);
    }
    Map<Path, Map<String, String>> byDir = new LinkedHashMap<>();
    for (Map.Entry<String, String> limit : wanted.entrySet()) {
      Optional<Path> dir = dirFor(limit.getKey(), sandboxId);
      if (dir.isEmpty()) {
        unenforced.add(limit.getKey());
        LOG.log(
            System.Logger.Level.WARNING,
            "sandbox {0}: no usable {1} cgroup on this host; it runs without its {2} limit",
            sandboxId,
            CONTROLLERS.get(limit.getKey()),
            limit.getKey());
      } else {
        byDir.computeIfAbsent(dir.get(), d -> new LinkedHashMap<>()).put(limit.getKey(), "");
      }
    }
    List<Path> made = new ArrayList<>();
    byDir.forEach(
        (dir, limits) -> {
          made.add(dir);
          for (String limit : limits.keySet()) {
            if (!write(dir, limit, resources, sandboxId)) {
              unenforced.add(limit);
            }
          }
          if (!join(dir, pid, sandboxId)) {
            limits.keySet().stream().filter(l -> !unenforced.contains(l)).forEach(unenforced::add);
          }
        });
    return new Applied(made, unenforced);
  }

  /**
   * Every cgroup {@link #apply} may create for {@code sandboxId}, whether it exists or not: what a
   * marker written before the agent is spawned names, so a teardown finds them all.
   */
  List<Path> candidates(String sandboxId) {
    Set<Path> dirs = new LinkedHashSet<>();
    for (String limit : List.of(MEMORY, PIDS, CPUS)) {
      dirFor(limit, sandboxId).ifPresent(dirs::add);
    }
    return List.copyOf(dirs);
  }

  /**
   * Moves a restarted agent into the limit cgroups its sandbox already has (they keep their limits
   * when the agent dies); one that cannot be joined is logged, never fatal.
   */
  void rejoin(List<Path> cgroups, long pid, String sandboxId) {
    for (Path dir : cgroups) {
      join(Freezers.checked(dir, sandboxId), pid, sandboxId);
    }
  }

  /**
   * How many processes the kernel's OOM killer killed in these memory cgroups so far: {@code
   * oom_kill} of v2's {@code memory.events} or v1's {@code memory.oom_control}; 0 without a memory
   * cgroup or a kernel that counts.
   */
  static long oomKills(List<Path> cgroups) {
    long kills = 0;
    for (Path dir : cgroups) {
      CgroupFiles files = new CgroupFiles(dir);
      for (String file : List.of("memory.events", "memory.oom_control")) {
        kills += files.keyed(file, "oom_kill").map(Long::parseLong).orElse(0L);
      }
    }
    return kills;
  }

  /** Removes limit cgroups (empty by now); absent ones are fine. */
  static void remove(List<Path> cgroups, String sandboxId) {
    for (Path dir : cgroups) {
      new CgroupFiles(Freezers.checked(dir, sandboxId)).remove();
    }
  }

  private static Map<String, String> wanted(Resources resources) {
    Map<String, String> wanted = new LinkedHashMap<>();
    resources.memoryBytes().ifPresent(b -> wanted.put(MEMORY, ""));
    resources.pids().ifPresent(p -> wanted.put(PIDS, ""));
    resources.cpus().ifPresent(c -> wanted.put(CPUS, ""));
    return wanted;
  }

  private Optional<Path> dirFor(String limit, String sandboxId) {
    String controller = CONTROLLERS.get(limit);
    if (v1.containsKey(controller)) {
      return Optional.of(v1.get(controller).resolve(sandboxId));
    }
    if (v2Controllers.contains(controller)) {
      return v2.map(base -> base.resolve(sandboxId));
    }
    return Optional.empty();
  }

  private boolean write(Path dir, String limit, Resources resources, String sandboxId) {
    CgroupFiles files = new CgroupFiles(dir);
    boolean v2Dir = v2.isPresent() && dir.getParent().equals(v2.get());
    try {
      files.create();
      switch (limit) {
        case MEMORY -> memory(files, resources.memoryBytes().getAsLong(), v2Dir);
        case PIDS -> files.write("pids.max", Integer.toString(resources.pids().getAsInt()));
        default -> cpu(files, resources.cpus().getAsDouble(), v2Dir);
      }
      return true;
    } catch (IOException | UncheckedIOException e) {
      LOG.log(
          System.Logger.Level.WARNING,
          "sandbox {0}: cannot set its {1} limit in {2} ({3}); it runs without it",
          sandboxId,
          limit,
          dir,
          e.getMessage());
      return false;
    }
  }

  /** The limit without swap beyond it (where the kernel accounts swap). */
  private static void memory(CgroupFiles files, long bytes, boolean v2Dir) {
    if (v2Dir) {
      files.write("memory.max", Long.toString(bytes));
      if (Files.exists(files.dir().resolve("memory.swap.max"))) {
        files.write("memory.swap.max", "0");
      }
      return;
    }
    files.write("memory.limit_in_bytes", Long.toString(bytes));
    if (Files.exists(files.dir().resolve("memory.memsw.limit_in_bytes"))) {
      files.write("memory.memsw.limit_in_bytes", Long.toString(bytes));
    }
  }

  private static void cpu(CgroupFiles files, double cpus, boolean v2Dir) {
    long quota = Math.max(1000, Math.round(cpus * CPU_PERIOD_US));
    if (v2Dir) {
      files.write("cpu.max", quota + " " + CPU_PERIOD_US);
    } else {
      files.write("cpu.cfs_period_us", Long.toString(CPU_PERIOD_US));
      files.write("cpu.cfs_quota_us", Long.toString(quota));
    }
  }

  private static boolean join(Path dir, long pid, String sandboxId) {
    try {
      new CgroupFiles(dir).write("cgroup.procs", Long.toString(pid));
      return true;
    } catch (UncheckedIOException e) {
      LOG.log(
          System.Logger.Level.WARNING,
          "sandbox {0}: cannot move its agent into {1} ({2}); it runs without those limits",
          sandboxId,
          dir,
          e.getMessage());
      return false;
    }
  }

  /** {@code <dir>/paddock} when it can be created and holds a writable {@code probe} file. */
  private static Optional<Path> usable(Path dir, String probe) {
    Path paddock = dir.resolve("paddock");
    try {
      Files.createDirectories(paddock);
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
    return Files.isWritable(paddock.resolve(probe))
            && Files.isWritable(paddock.resolve("cgroup.procs"))
        ? Optional.of(paddock)
        : Optional.empty();
  }

  /**
   * Makes {@code controller} available to the children of the v2 base, enabling it in the parent's
   * {@code cgroup.subtree_control} first when the parent offers it but does not pass it down (the
   * kernel refuses that while the parent has processes of its own and is not the root: then the
   * controller stays unavailable).
   */
  private static boolean enable(Path base, String controller) {
    CgroupFiles paddock = new CgroupFiles(base);
    CgroupFiles parent = new CgroupFiles(base.getParent());
    try {
      if (!listed(paddock, "cgroup.controllers", controller)) {
        if (!listed(parent, "cgroup.controllers", controller)) {
          return false;
        }
        parent.write("cgroup.subtree_control", "+" + controller);
      }
      if (!listed(paddock, "cgroup.subtree_control", controller)) {
        paddock.write("cgroup.subtree_control", "+" + controller);
      }
      return listed(paddock, "cgroup.subtree_control", controller);
    } catch (UncheckedIOException e) {
      LOG.log(
          System.Logger.Level.DEBUG,
          "process backend: cannot enable the {0} controller under {1}: {2}",
          controller,
          base,
          e.getMessage());
      return false;
    }
  }

  private static boolean listed(CgroupFiles files, String file, String controller) {
    return files.read(file).map(t -> List.of(t.split("\\s+")).contains(controller)).orElse(false);
  }
}
