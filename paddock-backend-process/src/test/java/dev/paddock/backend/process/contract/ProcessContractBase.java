package dev.paddock.backend.process.contract;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.SandboxSpec;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.backend.process.ProcessBackendProvider;
import dev.paddock.controlplane.CgroupRoots;
import dev.paddock.controlplane.SandboxServiceContract;
import dev.paddock.store.SandboxStore;
import dev.paddock.store.SandboxStores;
import dev.paddock.store.TestDatabase;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;

/**
 * The shared contract suite with the real process backend (agent-servers as child processes, frozen
 * through the cgroup freezer here) and the real JDBC store. Subclasses choose the database.
 */
abstract class ProcessContractBase extends SandboxServiceContract {
  private final Path dataDir;
  private TestDatabase database;

  private static final List<Path> CGROUP_ROOTS = CgroupRoots.all();

  private final java.util.Set<Path> cgroupsBefore;

  ProcessContractBase() {
    try {
      dataDir = Files.createTempDirectory("paddock-process-contract-");
      cgroupsBefore = sandboxCgroups();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Per-sandbox cgroups that exist now (this suite's sandbox ids start with "sb-"). */
  private static java.util.Set<Path> sandboxCgroups() throws IOException {
    java.util.Set<Path> found = new java.util.HashSet<>();
    for (Path root : CGROUP_ROOTS) {
      if (Files.isDirectory(root)) {
        try (var dirs = Files.list(root)) {
          dirs.filter(d -> d.getFileName().toString().startsWith("sb-")).forEach(found::add);
        }
      }
    }
    return found;
  }

  /** The database this run's store lives in (SQLite file or a PostgreSQL schema). */
  abstract TestDatabase database();

  @Override
  protected SandboxBackend newBackend() {
    return new ProcessBackendProvider()
        .create(
            Map.of(
                "paddock.data-dir", dataDir.toString(),
                "agent.command", ProcessBackendProvider.classPathAgentCommand(),
                "process.stop-grace", "3s"));
  }

  @Override
  protected SandboxStore newStore() {
    database = database();
    return SandboxStores.open(database.url(), database.user(), database.password());
  }

  @Override
  protected SandboxSpec runnableSpec() {
    return SandboxSpec.builder("process-default").build();
  }

  @Override
  protected SandboxSpec failingSpec() {
    return SandboxSpec.builder("exits-3")
        .command(List.of("bash", "-c", "echo 'secret detail: /srv/x' >&2; exit 3"))
        .build();
  }

  @Override
  protected void assertNothingLeaked() throws Exception {
    try {
      Awaitility.await("no agent process left behind")
          .atMost(Duration.ofSeconds(15))
          .pollInterval(Duration.ofMillis(50))
          .untilAsserted(
              () ->
                  assertThat(ProcessHandle.current().descendants().filter(ProcessHandle::isAlive))
                      .as("processes left behind")
                      .isEmpty());
      var cgroups = sandboxCgroups();
      cgroups.removeAll(cgroupsBefore);
      assertThat(cgroups).as("cgroups left behind").isEmpty();
      Path sandboxes = dataDir.resolve("sandboxes");
      if (Files.isDirectory(sandboxes)) {
        try (var left = Files.list(sandboxes)) {
          assertThat(left).as("sandbox directories left behind").isEmpty();
        }
      }
    } finally {
      if (database != null) {
        database.close();
      }
      deleteTree(dataDir);
    }
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
