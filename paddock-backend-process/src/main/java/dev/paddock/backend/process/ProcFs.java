package dev.paddock.backend.process;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Reads processes from {@code /proc}. Every read tolerates processes vanishing underneath it: a
 * process that exits mid-scan is simply absent. Stateless; thread-safe.
 */
final class ProcFs {
  /** The environment entry that labels every process of a sandbox. */
  static final String LABEL = "PADDOCK_SANDBOX_ID";

  private final Path root;

  ProcFs(Path root) {
    this.root = root;
  }

  /** Where {@code /proc} is. */
  Path root() {
    return root;
  }

  static ProcFs system() {
    return new ProcFs(Path.of("/proc"));
  }

  /** The process's stat, or empty when there is no such process. */
  Optional<ProcStat> stat(long pid) {
    try {
      return Optional.of(
          ProcStat.parse(Files.readString(root.resolve(pid + "/stat"), StandardCharsets.UTF_8)));
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
  }

  /** Whether {@code pid} is the live process that started at {@code startTime}. */
  boolean isAlive(long pid, long startTime) {
    return stat(pid).filter(s -> s.startTime() == startTime && s.alive()).isPresent();
  }

  /** Every live descendant of {@code pid} (not {@code pid} itself), parents before children. */
  List<Long> descendants(long pid) {
    Map<Long, List<Long>> children = new HashMap<>();
    for (ProcStat s : all()) {
      if (s.alive()) {
        children.computeIfAbsent(s.ppid(), k -> new ArrayList<>()).add(s.pid());
      }
    }
    Set<Long> found = new LinkedHashSet<>();
    Deque<Long> queue = new ArrayDeque<>(List.of(pid));
    while (!queue.isEmpty()) {
      for (long child : children.getOrDefault(queue.poll(), List.of())) {
        if (found.add(child)) {
          queue.add(child);
        }
      }
    }
    return List.copyOf(found);
  }

  /**
   * Every live process whose initial environment carries {@code PADDOCK_SANDBOX_ID=<sandboxId>}:
   * the agent and whatever it started, including processes that left its tree (double forks).
   * Processes this user may not read are skipped.
   */
  List<Long> labelled(String sandboxId) {
    byte[] entry = (LABEL + "=" + sandboxId).getBytes(StandardCharsets.UTF_8);
    List<Long> pids = new ArrayList<>();
    for (long pid : pids()) {
      if (hasEnvEntry(pid, entry) && stat(pid).filter(ProcStat::alive).isPresent()) {
        pids.add(pid);
      }
    }
    return pids;
  }

  private boolean hasEnvEntry(long pid, byte[] entry) {
    byte[] env;
    try {
      env = Files.readAllBytes(root.resolve(pid + "/environ"));
    } catch (IOException | RuntimeException e) {
      return false;
    }
    int start = 0;
    for (int i = 0; i <= env.length; i++) {
      if (i == env.length || env[i] == 0) {
        if (i - start == entry.length
            && java.util.Arrays.equals(env, start, i, entry, 0, i - start)) {
          return true;
        }
        start = i + 1;
      }
    }
    return false;
  }

  private List<ProcStat> all() {
    List<ProcStat> stats = new ArrayList<>();
    for (long pid : pids()) {
      stat(pid).ifPresent(stats::add);
    }
    return stats;
  }

  private List<Long> pids() {
    List<Long> pids = new ArrayList<>();
    try (DirectoryStream<Path> dir = Files.newDirectoryStream(root)) {
      for (Path p : dir) {
        String name = p.getFileName().toString();
        if (!name.isEmpty() && name.chars().allMatch(Character::isDigit)) {
          pids.add(Long.parseLong(name));
        }
      }
    } catch (IOException e) {
      throw new java.io.UncheckedIOException("cannot list " + root, e);
    }
    return pids;
  }
}
