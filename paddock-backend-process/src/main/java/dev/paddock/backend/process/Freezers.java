package dev.paddock.backend.process;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Chooses how sandboxes are frozen, once per backend, and makes a {@link Freezer} per sandbox.
 *
 * <p>{@code auto} prefers, in order: the cgroup v1 freezer ({@code <freezer mount>/<own
 * cgroup>/paddock} writable), then cgroup v2 ({@code <cgroup2 mount>/<own cgroup>/paddock} with a
 * {@code cgroup.freeze} file), then signals. v1 comes first because on a hybrid host the cgroup2
 * tree is the init system's process tracking, which moving agents out of would disturb, while the
 * v1 freezer hierarchy is ours alone; on a pure v2 host there is no v1 freezer, so v2 is chosen. A
 * sandbox's freezer kind and cgroup are recorded in its marker, so a later backend opens the same
 * one whatever it would detect itself.
 */
final class Freezers {
  private final String kind;
  private final Optional<Path> base;
  private final ProcFs procFs;
  private final Signals signals;

  private Freezers(String kind, Optional<Path> base, ProcFs procFs, Signals signals) {
    this.kind = kind;
    this.base = base;
    this.procFs = procFs;
    this.signals = signals;
  }

  /**
   * Detects what this host allows.
   *
   * @param mode {@code auto}, {@code cgroup-v1}, {@code cgroup-v2} or {@code signals}
   * @throws IllegalArgumentException when {@code mode} is forced but unusable here, or unknown
   */
  static Freezers detect(String mode, ProcFs procFs, Signals signals) {
    return switch (mode) {
      case "auto" ->
          cgroup(CgroupFreezer.V1, procFs, signals)
              .or(() -> cgroup(CgroupFreezer.V2, procFs, signals))
              .orElseGet(() -> new Freezers(SignalFreezer.KIND, Optional.empty(), procFs, signals));
      case CgroupFreezer.V1, CgroupFreezer.V2 ->
          cgroup(mode, procFs, signals)
              .orElseThrow(
                  () ->
                      new IllegalArgumentException(
                          "process.freezer="
                              + mode
                              + " but this host has no writable "
                              + mode
                              + " hierarchy (run as root, or use auto)"));
      case SignalFreezer.KIND -> new Freezers(mode, Optional.empty(), procFs, signals);
      default ->
          throw new IllegalArgumentException(
              "process.freezer: unknown '" + mode + "' (auto, cgroup-v1, cgroup-v2, signals)");
    };
  }

  private static Optional<Freezers> cgroup(String kind, ProcFs procFs, Signals signals) {
    Optional<Path> base =
        usable(
            kind.equals(CgroupFreezer.V1) ? CgroupHierarchy.v1("freezer") : CgroupHierarchy.v2(),
            CgroupFreezer.controlFile(kind));
    return base.map(dir -> new Freezers(kind, Optional.of(dir), procFs, signals));
  }

  /** {@code <dir>/paddock} when it can be created and holds {@code controlFile}. */
  private static Optional<Path> usable(Optional<Path> dir, String controlFile) {
    return dir.map(d -> d.resolve("paddock"))
        .filter(
            paddock -> {
              try {
                Files.createDirectories(paddock);
              } catch (IOException | RuntimeException e) {
                return false;
              }
              return Files.isWritable(paddock.resolve(controlFile))
                  && Files.isWritable(paddock.resolve("cgroup.procs"));
            });
  }

  /** The kind new sandboxes get. */
  String kind() {
    return kind;
  }

  /** A freezer for a sandbox about to be started (its cgroup is created on attach). */
  Freezer create(String sandboxId, long agentPid, long agentStartTime) {
    return open(kind, base.map(b -> b.resolve(sandboxId)), sandboxId, agentPid, agentStartTime);
  }

  /**
   * The freezer a sandbox was started with.
   *
   * @throws IllegalArgumentException on an unknown kind, or a cgroup path that is not this
   *     sandbox's
   */
  Freezer open(
      String kind, Optional<Path> cgroup, String sandboxId, long agentPid, long agentStartTime) {
    return switch (kind) {
      case CgroupFreezer.V1, CgroupFreezer.V2 ->
          CgroupFreezer.of(kind, checked(cgroup, sandboxId), signals);
      case SignalFreezer.KIND ->
          new SignalFreezer(agentPid, agentStartTime, sandboxId, procFs, signals);
      default -> throw new IllegalArgumentException("unknown freezer kind '" + kind + "'");
    };
  }

  private static Path checked(Optional<Path> cgroup, String sandboxId) {
    return checked(
        cgroup.orElseThrow(() -> new IllegalArgumentException("no cgroup recorded")), sandboxId);
  }

  /**
   * {@code dir} if it is a sandbox cgroup of {@code sandboxId} ({@code .../paddock/<id>},
   * absolute): a handle or marker can never make the backend write or remove any other cgroup.
   */
  static Path checked(Path dir, String sandboxId) {
    if (!dir.isAbsolute()
        || !dir.getFileName().toString().equals(sandboxId)
        || !dir.getParent().getFileName().toString().equals("paddock")) {
      throw new IllegalArgumentException("cgroup " + dir + " is not sandbox " + sandboxId + "'s");
    }
    return dir;
  }

  /** Where this process sits in each cgroup hierarchy, from {@code /proc/self}. */
  static final class CgroupHierarchy {
    private CgroupHierarchy() {}

    /**
     * {@code <controller mount>/<own cgroup in it>}, if a v1 hierarchy with {@code controller}
     * ({@code freezer}, {@code memory}, {@code pids}, {@code cpu}) is mounted.
     */
    static Optional<Path> v1(String controller) {
      return locate(
          fields ->
              fields[0].equals("cgroup") && List.of(fields[2].split(",")).contains(controller),
          line -> List.of(line.split(":", 3)[1].split(",")).contains(controller));
    }

    /** {@code <cgroup2 mount>/<own cgroup>}, if a cgroup2 hierarchy is mounted. */
    static Optional<Path> v2() {
      return locate(fields -> fields[0].equals("cgroup2"), line -> line.startsWith("0::"));
    }

    /**
     * Joins the mount point of the hierarchy that {@code mount} selects (from the fields after " -
     * " in mountinfo: fstype, source, super options) with this process's path in it (from the
     * {@code /proc/self/cgroup} line {@code own} selects), less the mount's own root.
     */
    private static Optional<Path> locate(
        java.util.function.Predicate<String[]> mount, java.util.function.Predicate<String> own) {
      try {
        List<String> mounts =
            Files.readAllLines(Path.of("/proc/self/mountinfo"), StandardCharsets.UTF_8);
        List<String> cgroups =
            Files.readAllLines(Path.of("/proc/self/cgroup"), StandardCharsets.UTF_8);
        Optional<String> ownPath =
            cgroups.stream().filter(own).map(l -> l.split(":", 3)[2]).findFirst();
        for (String line : mounts) {
          String[] halves = line.split(" - ", 2);
          String[] before = halves[0].split(" ");
          if (halves.length == 2 && mount.test(halves[1].split(" ")) && ownPath.isPresent()) {
            return Optional.of(join(Path.of(before[4]), before[3], ownPath.get()));
          }
        }
      } catch (IOException | RuntimeException e) {
        return Optional.empty();
      }
      return Optional.empty();
    }

    private static Path join(Path mountPoint, String mountRoot, String ownPath) {
      String relative = ownPath.startsWith(mountRoot) ? ownPath.substring(mountRoot.length()) : "";
      relative = relative.replaceFirst("^/+", "");
      return relative.isEmpty() ? mountPoint : mountPoint.resolve(relative);
    }
  }
}
