package dev.paddock.controlplane;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The processes of this whole machine that Paddock marked as a sandbox's: their environment carries
 * {@code PADDOCK_MANAGED=true} (the agents the process backend starts, and everything they start,
 * inherit it) or they sit in a cgroup under a {@code paddock} cgroup root. Found by scanning {@code
 * /proc}, not this JVM's process tree, so an orphan reparented to init is found as well.
 *
 * <p>Leak checks take a {@link #snapshot()} when a test begins and ask for what is {@link #newSince
 * new} after it: processes of other runs on the machine that were there before do not fail the
 * test. Processes this user may not read are skipped.
 */
public final class MarkedProcesses {
  private static final Path PROC = Path.of("/proc");
  private static final byte[] MARKER = "PADDOCK_MANAGED=true".getBytes(StandardCharsets.UTF_8);
  private static final Pattern PADDOCK_CGROUP = Pattern.compile("(^|/)paddock(-[a-z]+)?/");

  private MarkedProcesses() {}

  /** The marked processes alive now, each as {@code "<pid> <start time>"} (pids are reused). */
  public static Set<String> snapshot() {
    Set<String> found = new HashSet<>();
    for (long pid : pids()) {
      identity(pid).filter(id -> marked(pid)).ifPresent(found::add);
    }
    return found;
  }

  /** The marked processes alive now and not in {@code before}, each with its command line. */
  public static List<String> newSince(Set<String> before) {
    List<String> found = new ArrayList<>();
    for (long pid : pids()) {
      identity(pid)
          .filter(id -> !before.contains(id) && marked(pid))
          .ifPresent(id -> found.add(id + " " + commandLine(pid)));
    }
    return found;
  }

  private static boolean marked(long pid) {
    return hasEnvEntry(pid) || inPaddockCgroup(pid);
  }

  private static boolean hasEnvEntry(long pid) {
    byte[] env = read(PROC.resolve(pid + "/environ"));
    int start = 0;
    for (int i = 0; i <= env.length; i++) {
      if (i == env.length || env[i] == 0) {
        if (i - start == MARKER.length
            && java.util.Arrays.equals(env, start, i, MARKER, 0, MARKER.length)) {
          return true;
        }
        start = i + 1;
      }
    }
    return false;
  }

  private static boolean inPaddockCgroup(long pid) {
    String cgroups = new String(read(PROC.resolve(pid + "/cgroup")), StandardCharsets.UTF_8);
    return cgroups.lines().anyMatch(line -> PADDOCK_CGROUP.matcher(line).find());
  }

  /** {@code "<pid> <start time>"} of a live (not zombie) process; empty when it is gone. */
  private static Optional<String> identity(long pid) {
    String stat = new String(read(PROC.resolve(pid + "/stat")), StandardCharsets.UTF_8);
    int end = stat.lastIndexOf(')');
    if (end < 0) {
      return Optional.empty();
    }
    String[] fields = stat.substring(end + 2).split(" ");
    // After the command: state (field 3), ..., start time (field 22).
    if (fields.length < 20 || fields[0].equals("Z") || fields[0].equals("X")) {
      return Optional.empty();
    }
    return Optional.of(pid + " " + fields[19]);
  }

  private static String commandLine(long pid) {
    byte[] cmdline = read(PROC.resolve(pid + "/cmdline"));
    return new String(cmdline, StandardCharsets.UTF_8).replace('\0', ' ').strip();
  }

  private static byte[] read(Path file) {
    try {
      return Files.readAllBytes(file);
    } catch (IOException | RuntimeException e) {
      return new byte[0]; // gone, or not this user's to read
    }
  }

  private static List<Long> pids() {
    List<Long> pids = new ArrayList<>();
    try (DirectoryStream<Path> dir = Files.newDirectoryStream(PROC)) {
      for (Path p : dir) {
        String name = p.getFileName().toString();
        if (!name.isEmpty() && name.chars().allMatch(Character::isDigit)) {
          pids.add(Long.parseLong(name));
        }
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException("cannot list " + PROC, e);
    }
    return pids;
  }
}
