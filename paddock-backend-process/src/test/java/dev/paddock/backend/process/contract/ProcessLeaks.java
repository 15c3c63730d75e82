package dev.paddock.backend.process.contract;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.controlplane.CgroupRoots;
import dev.paddock.controlplane.MarkedProcesses;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.awaitility.Awaitility;

/**
 * What a process-backend test may leave behind, checked after it: agent processes (children of this
 * JVM, and any process of the machine Paddock marked, by environment or cgroup, that was not there
 * when the test began: an orphan reparented to init is found too), per-sandbox cgroups ({@code
 * sb-*}) new since the test began, and sandbox directories under its data directory, which it then
 * removes.
 */
final class ProcessLeaks {
  private static final List<Path> CGROUP_ROOTS = CgroupRoots.all();

  private final Path dataDir;
  private final Set<Path> cgroupsBefore;
  private final Set<String> markedBefore = MarkedProcesses.snapshot();

  ProcessLeaks() {
    try {
      dataDir = Files.createTempDirectory("paddock-process-contract-");
      cgroupsBefore = sandboxCgroups();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  Path dataDir() {
    return dataDir;
  }

  /** Fails on anything left; removes the data directory either way. */
  void assertNothingLeaked() throws IOException {
    try {
      Awaitility.await("no agent process left behind")
          .atMost(Duration.ofSeconds(15))
          .pollInterval(Duration.ofMillis(50))
          .untilAsserted(
              () -> {
                assertThat(ProcessHandle.current().descendants().filter(ProcessHandle::isAlive))
                    .as("processes left behind")
                    .isEmpty();
                assertThat(MarkedProcesses.newSince(markedBefore))
                    .as("Paddock-marked processes left on the machine (orphans included)")
                    .isEmpty();
              });
      Set<Path> cgroups = sandboxCgroups();
      cgroups.removeAll(cgroupsBefore);
      assertThat(cgroups).as("cgroups left behind").isEmpty();
      Path sandboxes = dataDir.resolve("sandboxes");
      if (Files.isDirectory(sandboxes)) {
        try (var left = Files.list(sandboxes)) {
          assertThat(left).as("sandbox directories left behind").isEmpty();
        }
      }
    } finally {
      deleteTree(dataDir);
    }
  }

  /** Per-sandbox cgroups that exist now (the suites' sandbox ids start with "sb-"). */
  private static Set<Path> sandboxCgroups() throws IOException {
    Set<Path> found = new HashSet<>();
    for (Path root : CGROUP_ROOTS) {
      if (Files.isDirectory(root)) {
        try (var dirs = Files.list(root)) {
          dirs.filter(d -> d.getFileName().toString().startsWith("sb-")).forEach(found::add);
        }
      }
    }
    return found;
  }

  private static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (var paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
