package dev.paddock.agent.bash;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * How many processes the kernel OOM killer has killed in the agent's memory cgroup: the {@code
 * oom_kill} field of cgroup v2 {@code memory.events} or of cgroup v1 {@code memory.oom_control}
 * (both are {@code name value} lines). A command that died of SIGKILL while this count rose was
 * killed for memory. Reading is one small file read, cheap enough for every command; a counter that
 * cannot be read answers empty, and then no kill is ever reported (never guessed). Immutable and
 * thread-safe.
 */
final class OomKillCounter {
  private static final String FIELD = "oom_kill";

  private final Optional<Path> file;

  private OomKillCounter(Optional<Path> file) {
    this.file = file;
  }

  /** A counter read from {@code file} (which may appear or vanish later). */
  static OomKillCounter at(Path file) {
    return new OomKillCounter(Optional.of(file));
  }

  /** The counter of this process's memory cgroup; reads empty when none is readable. */
  static OomKillCounter ofThisProcess() {
    try {
      String cgroups = Files.readString(Path.of("/proc/self/cgroup"));
      String mounts = Files.readString(Path.of("/proc/self/mountinfo"));
      List<Path> candidates = CgroupFiles.oomCounterCandidates(cgroups, mounts);
      for (Path candidate : candidates) {
        OomKillCounter counter = at(candidate);
        if (counter.read().isPresent()) {
          return counter;
        }
      }
    } catch (IOException e) {
      // No /proc (not Linux, or a very restricted sandbox): OOM kills go unreported.
    }
    return new OomKillCounter(Optional.empty());
  }

  /** The file read, if any (for diagnostics). */
  Optional<Path> file() {
    return file;
  }

  /** The current count, or empty when the file is missing, unreadable or has no count. */
  OptionalLong read() {
    if (file.isEmpty()) {
      return OptionalLong.empty();
    }
    try {
      return parse(Files.readString(file.get()));
    } catch (IOException | RuntimeException e) {
      return OptionalLong.empty();
    }
  }

  /**
   * The {@code oom_kill} value of a {@code memory.events} or {@code memory.oom_control} text; empty
   * when there is no such line (kernels before 4.13 have none in v1) or it is not a count.
   */
  static OptionalLong parse(String text) {
    for (String line : text.split("\n")) {
      String[] parts = line.trim().split("\\s+");
      if (parts.length == 2 && parts[0].equals(FIELD)) {
        try {
          long count = Long.parseLong(parts[1]);
          return count >= 0 ? OptionalLong.of(count) : OptionalLong.empty();
        } catch (NumberFormatException e) {
          return OptionalLong.empty();
        }
      }
    }
    return OptionalLong.empty();
  }
}
