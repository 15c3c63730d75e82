package dev.paddock.backend.process;

import dev.paddock.api.spi.RuntimeStats;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.stream.Stream;

/**
 * Reads a process sandbox's resource use: from its cgroups where it has them (v2 {@code cpu.stat},
 * {@code memory.current}, {@code memory.peak}; v1 {@code cpuacct.usage}, {@code
 * memory.usage_in_bytes}, {@code memory.max_usage_in_bytes}), which count processes that already
 * exited, and its processes from their {@code cgroup.procs}; else from {@code /proc} of the agent
 * and its descendants ({@code utime + stime} plus what reaped children used, resident pages). The
 * workspace's size is summed up to {@link #MAX_FILES} entries (absent beyond, rather than slow).
 * The process backend shares the host's network, so no network bytes.
 */
final class ProcessStats {
  static final int MAX_FILES = 20_000;
  private static final double CLOCK_TICKS = 100; // USER_HZ on every Linux we run on
  private static final long PAGE_BYTES = 4096;

  private final ProcFs procFs;
  private final Path procRoot;

  ProcessStats(ProcFs procFs, Path procRoot) {
    this.procFs = procFs;
    this.procRoot = procRoot;
  }

  RuntimeStats read(long agentPid, List<Path> limitCgroups, Path workspace) {
    OptionalLong cgroupCpuMicros = first(limitCgroups, ProcessStats::cgroupCpuMicros);
    OptionalLong cgroupMemory =
        first(limitCgroups, d -> number(d, "memory.current", "memory.usage_in_bytes"));
    // The cgroup's member list spares a scan of every process on the host (the tree below).
    List<Long> pids = members(limitCgroups).orElseGet(() -> tree(agentPid));
    double cpu = 0;
    long memory = 0;
    if (cgroupCpuMicros.isEmpty() || cgroupMemory.isEmpty()) {
      for (long pid : pids) {
        Optional<long[]> fields = statFields(pid);
        if (fields.isPresent()) {
          cpu += fields.get()[0] / CLOCK_TICKS;
          memory += fields.get()[1] * PAGE_BYTES;
        }
      }
    }
    return new RuntimeStats(
        Instant.now(),
        cgroupCpuMicros.isPresent() ? cgroupCpuMicros.getAsLong() / 1e6 : cpu,
        cgroupMemory.orElse(memory),
        first(limitCgroups, d -> number(d, "memory.peak", "memory.max_usage_in_bytes")),
        pids.size(),
        diskBytes(workspace),
        OptionalLong.empty(),
        OptionalLong.empty());
  }

  private List<Long> tree(long agentPid) {
    List<Long> pids = new ArrayList<>(List.of(agentPid));
    pids.addAll(procFs.descendants(agentPid));
    return pids;
  }

  /**
   * The processes in the first of {@code dirs} that lists any ({@code cgroup.procs}, with those of
   * its child cgroups: on v2 a process in a child is not listed by its parent).
   */
  private static Optional<List<Long>> members(List<Path> dirs) {
    for (Path dir : dirs) {
      List<Long> pids = new ArrayList<>();
      collect(dir, 0, pids);
      if (!pids.isEmpty()) {
        return Optional.of(pids);
      }
    }
    return Optional.empty();
  }

  private static void collect(Path dir, int depth, List<Long> pids) {
    try {
      for (String line : Files.readAllLines(dir.resolve("cgroup.procs"))) {
        if (!line.isBlank()) {
          pids.add(Long.parseLong(line.strip()));
        }
      }
      if (depth < 4) {
        try (Stream<Path> children = Files.list(dir)) {
          for (Path child : children.filter(Files::isDirectory).toList()) {
            collect(child, depth + 1, pids);
          }
        }
      }
    } catch (IOException | RuntimeException e) {
      // not a cgroup with a member list (or gone meanwhile)
    }
  }

  /** utime + stime + cutime + cstime (ticks) and rss (pages) from {@code /proc/<pid>/stat}. */
  private Optional<long[]> statFields(long pid) {
    try {
      String line = Files.readString(procRoot.resolve(Long.toString(pid)).resolve("stat"));
      String[] f = line.substring(line.lastIndexOf(')') + 2).split(" ");
      // f[0] is field 3 (state): utime is field 14, rss field 24.
      long ticks =
          Long.parseLong(f[11])
              + Long.parseLong(f[12])
              + Long.parseLong(f[13])
              + Long.parseLong(f[14]);
      return Optional.of(new long[] {ticks, Long.parseLong(f[21])});
    } catch (IOException | RuntimeException e) {
      return Optional.empty(); // exited meanwhile
    }
  }

  private static OptionalLong cgroupCpuMicros(Path dir) {
    try {
      Path v2 = dir.resolve("cpu.stat");
      if (Files.isRegularFile(v2)) {
        for (String line : Files.readAllLines(v2)) {
          if (line.startsWith("usage_usec ")) {
            return OptionalLong.of(Long.parseLong(line.substring(11).trim()));
          }
        }
      }
      Path v1 = dir.resolve("cpuacct.usage");
      if (Files.isRegularFile(v1)) {
        return OptionalLong.of(Long.parseLong(Files.readString(v1).trim()) / 1000);
      }
    } catch (IOException | NumberFormatException e) {
      return OptionalLong.empty();
    }
    return OptionalLong.empty();
  }

  private static OptionalLong number(Path dir, String... files) {
    for (String name : files) {
      try {
        Path file = dir.resolve(name);
        if (Files.isRegularFile(file)) {
          return OptionalLong.of(Long.parseLong(Files.readString(file).trim()));
        }
      } catch (IOException | NumberFormatException e) {
        // the cgroup went away meanwhile, or holds "max": try the next name
      }
    }
    return OptionalLong.empty();
  }

  private static OptionalLong first(
      List<Path> dirs, java.util.function.Function<Path, OptionalLong> read) {
    for (Path dir : dirs) {
      OptionalLong value = read.apply(dir);
      if (value.isPresent()) {
        return value;
      }
    }
    return OptionalLong.empty();
  }

  /** The workspace's bytes (regular files, not following links), up to {@link #MAX_FILES}. */
  static OptionalLong diskBytes(Path workspace) {
    long total = 0;
    int seen = 0;
    try (Stream<Path> paths = Files.walk(workspace)) {
      Iterator<Path> it = paths.iterator();
      while (it.hasNext()) {
        if (++seen > MAX_FILES) {
          return OptionalLong.empty();
        }
        BasicFileAttributes a =
            Files.readAttributes(
                it.next(), BasicFileAttributes.class, java.nio.file.LinkOption.NOFOLLOW_LINKS);
        if (a.isRegularFile()) {
          total += a.size();
        }
      }
      return OptionalLong.of(total);
    } catch (IOException | java.io.UncheckedIOException e) {
      return OptionalLong.empty(); // a file vanished while walking, or the workspace is gone
    }
  }
}
