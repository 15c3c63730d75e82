package dev.paddock.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The Docker backend's sandboxes on this machine, found by the engine's labels ({@code
 * paddock.managed=true}, {@code paddock.sandbox-id}), never by what the control plane lists:
 * processes by their container's cgroup ({@code docker/<id>}, {@code docker-<id>.scope}), also of
 * containers since removed; a PAUSED sandbox's container is {@code paused} with its freezer cgroup
 * {@code FROZEN} (docs/DOCKER.md: pause is {@code docker pause}), or stopped under its {@code
 * -paused} name (an image's own agent); the workspace in the sandbox's labelled volume; leftovers
 * are containers, volumes and container cgroups.
 */
final class DockerCycleRuntimes implements CycleRuntimes {
  private static final Pattern CONTAINER_CGROUP =
      Pattern.compile("(?:/docker/|docker-)([0-9a-f]{64})");
  private static final Path CGROUPS = Path.of("/sys/fs/cgroup");

  /** A labelled container as {@code docker ps -a} lists it. */
  private record Container(String id, String sandbox, String state, String name) {
    String seen() {
      return "container " + name + " " + state;
    }
  }

  /** Every test container ever seen, by container id: a removed one's processes still count. */
  private final Map<String, String> sandboxOfContainer = new HashMap<>();

  private final Map<String, Path> volumeDirs = new HashMap<>();
  private List<Container> containers = List.of();
  private Map<String, String> volumes = Map.of();

  @Override
  public Map<String, String> serverSettings() {
    return TestDocker.serverSettings();
  }

  @Override
  public void observe() throws IOException {
    List<Container> listed = new ArrayList<>();
    for (String line :
        docker(
            "ps",
            "-a",
            "--no-trunc",
            "--filter",
            "label=paddock.managed=true",
            "--format",
            "{{.ID}}\t{{.Label \"paddock.sandbox-id\"}}\t{{.State}}\t{{.Names}}")) {
      String[] f = line.split("\t", -1);
      if (f.length == 4 && f[1].startsWith(LifecycleCrashCyclesContract.ID_PREFIX)) {
        listed.add(new Container(f[0], f[1], f[2], f[3]));
        sandboxOfContainer.put(f[0], f[1]);
      }
    }
    containers = listed;
    Map<String, String> named = new HashMap<>();
    for (String line :
        docker(
            "volume",
            "ls",
            "--filter",
            "label=paddock.managed=true",
            "--format",
            "{{.Name}}\t{{.Label \"paddock.sandbox-id\"}}")) {
      String[] f = line.split("\t", -1);
      if (f.length == 2 && f[1].startsWith(LifecycleCrashCyclesContract.ID_PREFIX)) {
        named.put(f[0], f[1]);
      }
    }
    volumes = named;
  }

  @Override
  public Optional<String> ownerByCgroup(String cgroups) {
    Matcher m = CONTAINER_CGROUP.matcher(cgroups);
    while (m.find()) {
      Optional<String> owner = Optional.ofNullable(sandboxOfContainer.get(m.group(1)));
      if (owner.isPresent()) {
        return owner;
      }
    }
    return Optional.empty();
  }

  @Override
  public Runtime runtime(String id, List<Long> processes) throws IOException {
    List<Container> of = containersOf(id);
    if (of.isEmpty()) {
      return Runtime.of(
          processes.isEmpty() ? State.NONE : State.OTHER, "no container, processes " + processes);
    }
    if (of.size() > 1) {
      return Runtime.of(State.OTHER, "containers " + of);
    }
    Container c = of.getFirst();
    Optional<String> freezer = freezerState(c.id());
    String seen = c.seen() + ", freezer " + freezer.orElse("none");
    boolean frozenCgroup = freezer.filter(s -> s.equals("FROZEN") || s.equals("1")).isPresent();
    return switch (c.state()) {
      case "paused" ->
          Runtime.of(frozenCgroup || freezer.isEmpty() ? State.FROZEN : State.OTHER, seen);
      case "running" -> Runtime.of(frozenCgroup ? State.OTHER : State.RUNS, seen);
      case "exited" ->
          Runtime.of(
              c.name().endsWith("-paused") && processes.isEmpty() ? State.FROZEN : State.OTHER,
              seen);
      default -> Runtime.of(State.OTHER, seen);
    };
  }

  @Override
  public Path workspaceFile(String id, String name) throws IOException {
    Path dir = volumeDirs.get(id);
    if (dir == null) {
      String volume = "paddock-" + id + "-workspace";
      Optional<String> mount = mountpoint(volume);
      if (mount.isEmpty()) {
        return Path.of("/nonexistent", volume, name); // no volume: no counter file
      }
      dir = Path.of(mount.get());
      volumeDirs.put(id, dir);
    }
    return dir.resolve(name);
  }

  @Override
  public List<String> leftOf(String id) throws IOException {
    List<String> left = new ArrayList<>();
    containersOf(id).forEach(c -> left.add(c.seen()));
    volumes.forEach(
        (volume, sandbox) -> {
          if (sandbox.equals(id)) {
            left.add("volume " + volume);
          }
        });
    for (Path cgroup : containerCgroups()) {
      if (ownerOfCgroup(cgroup).filter(id::equals).isPresent()) {
        left.add("cgroup " + cgroup);
      }
    }
    return left;
  }

  @Override
  public List<String> withoutASandbox(Set<String> listed, Set<String> live) throws IOException {
    List<String> left = new ArrayList<>();
    for (Container c : containers) {
      if (!live.contains(c.sandbox())) {
        left.add(c.seen() + " of " + c.sandbox());
      }
    }
    volumes.forEach(
        (volume, sandbox) -> {
          if (!listed.contains(sandbox)) {
            left.add("volume " + volume);
          }
        });
    Set<String> runningContainers = new java.util.HashSet<>();
    containers.stream()
        .filter(c -> c.state().equals("running") || c.state().equals("paused"))
        .forEach(c -> runningContainers.add(c.id()));
    for (Path cgroup : containerCgroups()) {
      Optional<String> container = containerIdOf(cgroup);
      if (ownerOfCgroup(cgroup).isPresent() && !runningContainers.contains(container.get())) {
        left.add("cgroup " + cgroup + " of " + ownerOfCgroup(cgroup).get());
      }
    }
    return left;
  }

  private List<Container> containersOf(String id) {
    return containers.stream().filter(c -> c.sandbox().equals(id)).toList();
  }

  private Optional<String> ownerOfCgroup(Path cgroup) {
    return containerIdOf(cgroup).map(sandboxOfContainer::get);
  }

  private static Optional<String> containerIdOf(Path cgroup) {
    Matcher m =
        CONTAINER_CGROUP.matcher(
            "/" + cgroup.getParent().getFileName() + "/" + cgroup.getFileName());
    return m.find() ? Optional.of(m.group(1)) : Optional.empty();
  }

  /**
   * Every container cgroup on the machine: {@code <controller>/docker/<id>} (cgroupfs driver, v1
   * and v2) and {@code <controller>/system.slice/docker-<id>.scope} (systemd driver).
   */
  private static List<Path> containerCgroups() throws IOException {
    List<Path> found = new ArrayList<>();
    List<Path> parents =
        new ArrayList<>(List.of(CGROUPS.resolve("docker"), CGROUPS.resolve("system.slice")));
    try (Stream<Path> controllers = Files.list(CGROUPS)) {
      controllers.forEach(
          c -> {
            parents.add(c.resolve("docker"));
            parents.add(c.resolve("system.slice"));
          });
    }
    for (Path parent : parents) {
      if (Files.isDirectory(parent)) {
        try (Stream<Path> dirs = Files.list(parent)) {
          dirs.filter(d -> containerIdOf(d).isPresent()).forEach(found::add);
        }
      }
    }
    return found;
  }

  /** The container's freezer, v1 ({@code freezer.state}) or v2 ({@code cgroup.freeze}). */
  private static Optional<String> freezerState(String container) throws IOException {
    for (Path dir :
        List.of(
            CGROUPS.resolve("freezer/docker").resolve(container),
            CGROUPS.resolve("freezer/system.slice/docker-" + container + ".scope"),
            CGROUPS.resolve("docker").resolve(container),
            CGROUPS.resolve("system.slice/docker-" + container + ".scope"))) {
      for (String file : List.of("freezer.state", "cgroup.freeze")) {
        if (Files.exists(dir.resolve(file))) {
          return Optional.of(Files.readString(dir.resolve(file)).trim());
        }
      }
    }
    return Optional.empty();
  }

  /** The volume's directory on this machine; empty when there is no such volume. */
  private static Optional<String> mountpoint(String volume) throws IOException {
    Process p =
        new ProcessBuilder("docker", "volume", "inspect", "--format", "{{.Mountpoint}}", volume)
            .redirectErrorStream(true)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    try {
      return p.waitFor() == 0 && !out.isEmpty() ? Optional.of(out) : Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
  }

  private static List<String> docker(String... args) throws IOException {
    try {
      return TestDocker.run(args).lines().filter(l -> !l.isBlank()).toList();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
  }
}
