package dev.paddock.backend.remote;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.SandboxSpec;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.controlplane.CgroupRoots;
import dev.paddock.controlplane.MarkedProcesses;
import dev.paddock.controlplane.SandboxServiceContract;
import dev.paddock.store.SandboxStore;
import dev.paddock.store.SandboxStores;
import dev.paddock.store.TestDatabase;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The shared contract suite with {@code RUNTIME=remote} over two real runtime APIs (each its own
 * JVM, the process backend under it), the SQLite store: every sandbox the control plane starts runs
 * on one of them.
 */
class RemoteContractTest extends SandboxServiceContract {
  private static RuntimeApiProcesses runtimeApis;
  private static Set<Path> cgroupsBefore;
  private final Set<String> markedBefore = MarkedProcesses.snapshot();
  private TestDatabase database;

  @BeforeAll
  static void startRuntimeApis() throws IOException {
    cgroupsBefore = sandboxCgroups();
    runtimeApis = RuntimeApiProcesses.start(2, 50);
  }

  @AfterAll
  static void stopRuntimeApis() {
    if (runtimeApis != null) {
      runtimeApis.close();
    }
  }

  @Override
  protected SandboxBackend newBackend() {
    return runtimeApis.backend("contract");
  }

  @Override
  protected SandboxStore newStore() {
    database = TestDatabase.sqlite();
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
      Awaitility.await("no agent left under the runtime APIs")
          .atMost(Duration.ofSeconds(15))
          .pollInterval(Duration.ofMillis(50))
          .untilAsserted(
              () -> {
                assertThat(runtimeApis.agents()).isEmpty();
                assertThat(MarkedProcesses.newSince(markedBefore))
                    .as("Paddock-marked processes left on the machine (orphans included)")
                    .isEmpty();
              });
      assertThat(runtimeApis.sandboxDirs()).as("sandbox directories left behind").isEmpty();
      Set<Path> cgroups = sandboxCgroups();
      cgroups.removeAll(cgroupsBefore);
      assertThat(cgroups).as("cgroups left behind").isEmpty();
    } finally {
      if (database != null) {
        database.close();
      }
    }
  }

  /** Per-sandbox cgroups that exist now (this suite's sandbox ids start with "sb-"). */
  private static Set<Path> sandboxCgroups() throws IOException {
    Set<Path> found = new HashSet<>();
    for (Path root : CgroupRoots.all()) {
      if (Files.isDirectory(root)) {
        try (var dirs = Files.list(root)) {
          dirs.filter(d -> d.getFileName().toString().startsWith("sb-")).forEach(found::add);
        }
      }
    }
    return found;
  }
}
