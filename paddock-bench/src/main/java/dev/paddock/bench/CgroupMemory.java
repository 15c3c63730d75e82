package dev.paddock.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * A container's memory as its cgroup accounts it, read from the host's cgroup file system (the
 * cgroupfs driver's layout on cgroup v1, and both the systemd and cgroupfs layouts on v2).
 *
 * @param usageBytes what the cgroup is charged: v1 {@code memory.usage_in_bytes}, v2 {@code
 *     memory.current} (anonymous memory plus page cache and kernel memory)
 * @param rssBytes anonymous memory only: v1 {@code total_rss}, v2 {@code anon} of {@code
 *     memory.stat}
 */
record CgroupMemory(long usageBytes, long rssBytes) {
  private static final Path ROOT = Path.of("/sys/fs/cgroup");

  /** The memory of the container whose full id is {@code containerId}. */
  static CgroupMemory of(String containerId) throws IOException {
    Path v1 = ROOT.resolve("memory/docker").resolve(containerId);
    if (Files.isRegularFile(v1.resolve("memory.usage_in_bytes"))) {
      return read(v1, "memory.usage_in_bytes", "total_rss");
    }
    List<Path> v2 =
        List.of(
            ROOT.resolve("system.slice/docker-" + containerId + ".scope"),
            ROOT.resolve("docker").resolve(containerId));
    for (Path dir : v2) {
      if (Files.isRegularFile(dir.resolve("memory.current"))) {
        return read(dir, "memory.current", "anon");
      }
    }
    throw new IllegalStateException(
        "no memory cgroup found for container "
            + containerId
            + " under "
            + ROOT
            + " (looked for the cgroupfs v1 and the v2 layouts); is the bench running on the"
            + " engine's host?");
  }

  private static CgroupMemory read(Path dir, String usageFile, String rssKey) throws IOException {
    long usage = Long.parseLong(Files.readString(dir.resolve(usageFile)).strip());
    long rss =
        Files.readAllLines(dir.resolve("memory.stat")).stream()
            .filter(line -> line.startsWith(rssKey + " "))
            .mapToLong(line -> Long.parseLong(line.substring(rssKey.length() + 1).strip()))
            .findFirst()
            .orElseThrow(
                () -> new IllegalStateException(dir + "/memory.stat has no " + rssKey + " line"));
    return new CgroupMemory(usage, rss);
  }
}
