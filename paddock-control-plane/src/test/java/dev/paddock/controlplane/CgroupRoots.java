package dev.paddock.controlplane;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The {@code paddock} cgroup directories the process backend may create sandbox cgroups in: the
 * freezer's (v1 and v2) and, for limits, {@code <controller mount>/<this process's cgroup>/paddock}
 * of the memory, pids and cpu hierarchies (children inherit this process's cgroups). Shared by the
 * process backend's and the CLI's leak checks.
 */
public final class CgroupRoots {
  private CgroupRoots() {}

  /** Every such directory, whether it exists or not. */
  public static List<Path> all() {
    List<Path> roots =
        new ArrayList<>(
            List.of(
                Path.of("/sys/fs/cgroup/freezer/paddock"),
                Path.of("/sys/fs/cgroup/unified/paddock"),
                Path.of("/sys/fs/cgroup/paddock")));
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/cgroup"))) {
        String[] fields = line.split(":", 3);
        for (String controller : List.of("memory", "pids", "cpu")) {
          if (fields.length == 3 && List.of(fields[1].split(",")).contains(controller)) {
            roots.add(Path.of("/sys/fs/cgroup/" + controller + fields[2]).resolve("paddock"));
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return roots;
  }
}
