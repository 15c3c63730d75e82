package dev.paddock.backend.process;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * One sandbox's directory, {@code <data dir>/sandboxes/<id>/}: the agent's working directory and
 * {@code HOME} ({@code workspace/}), its event spool ({@code events/}), the marker ({@code
 * paddock.json}) and the agent's output ({@code agent.log}).
 */
record SandboxLayout(String sandboxId, Path root) {
  /** Ids are used as directory and cgroup names, so they are plain names. */
  private static final Pattern SAFE_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,127}");

  /**
   * The layout of {@code sandboxId} under {@code sandboxesDir}.
   *
   * @throws IllegalArgumentException when the id could escape the directory or name no directory
   */
  static SandboxLayout of(Path sandboxesDir, String sandboxId) {
    if (!SAFE_ID.matcher(sandboxId).matches() || sandboxId.contains("..")) {
      throw new IllegalArgumentException(
          "sandbox id '"
              + sandboxId
              + "' is not usable as a directory name ([A-Za-z0-9._-]{1,128})");
    }
    return new SandboxLayout(sandboxId, sandboxesDir.resolve(sandboxId));
  }

  Path workspace() {
    return root.resolve("workspace");
  }

  Path events() {
    return root.resolve("events");
  }

  /** Where the agent writes its port once it serves ({@code --ready-file}). */
  Path readyFile() {
    return root.resolve("agent.port");
  }

  Path marker() {
    return root.resolve("paddock.json");
  }

  /** How the agent was launched ({@link AgentLaunch}), for a restart after it died. */
  Path launch() {
    return root.resolve("agent.launch.json");
  }

  /**
   * Whether an agent of this sandbox ever served: {@code agent.served} is written at its first
   * ready line and kept across restarts, so a dead agent is told from a start that never finished.
   */
  boolean served() {
    return Files.exists(root.resolve("agent.served"));
  }

  /** Records that an agent of this sandbox served ({@link #served()}). */
  void markServed() throws IOException {
    Path served = root.resolve("agent.served");
    if (!Files.exists(served)) {
      Files.writeString(served, "");
    }
  }

  Path log() {
    return root.resolve("agent.log");
  }

  /**
   * Creates the directory and its workspace.
   *
   * @throws java.nio.file.FileAlreadyExistsException when the sandbox directory exists: it may
   *     belong to a live sandbox, so it is never reused
   */
  void create() throws IOException {
    Files.createDirectories(root.getParent());
    Files.createDirectory(root);
    Files.createDirectory(workspace());
    Files.createDirectory(events());
  }

  /**
   * Removes the directory and everything in it, without following symbolic links out of it. A
   * directory a command made read-only is made writable again first. Absent is fine.
   */
  void delete() throws IOException {
    if (!Files.exists(root, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    List<Path> paths;
    try (Stream<Path> walk = Files.walk(root)) {
      paths = walk.sorted(Comparator.reverseOrder()).toList();
    }
    for (Path path : paths) {
      try {
        Files.deleteIfExists(path);
      } catch (AccessDeniedException e) {
        makeWritable(path.getParent());
        Files.deleteIfExists(path);
      }
    }
  }

  private static void makeWritable(Path dir) throws IOException {
    Set<PosixFilePermission> perms = Files.getPosixFilePermissions(dir);
    perms.add(PosixFilePermission.OWNER_WRITE);
    perms.add(PosixFilePermission.OWNER_EXECUTE);
    Files.setPosixFilePermissions(dir, perms);
  }
}
