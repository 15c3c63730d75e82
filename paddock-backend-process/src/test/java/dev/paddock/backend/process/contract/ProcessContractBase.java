package dev.paddock.backend.process.contract;

import dev.paddock.api.SandboxSpec;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.backend.process.ProcessBackendProvider;
import dev.paddock.controlplane.SandboxServiceContract;
import dev.paddock.store.SandboxStore;
import dev.paddock.store.SandboxStores;
import dev.paddock.store.TestDatabase;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The shared contract suite with the real process backend (agent-servers as child processes, frozen
 * through the cgroup freezer here) and the real JDBC store. Subclasses choose the database.
 */
abstract class ProcessContractBase extends SandboxServiceContract {
  private final ProcessLeaks leaks = new ProcessLeaks();
  private final Path dataDir = leaks.dataDir();
  private TestDatabase database;

  /** This test's data directory (removed by the leak check after the test). */
  final Path dataDir() {
    return dataDir;
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
      leaks.assertNothingLeaked();
    } finally {
      if (database != null) {
        database.close();
      }
    }
  }
}
