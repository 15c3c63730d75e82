package dev.paddock.backend.docker;

import dev.paddock.api.SandboxSpec;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.controlplane.SandboxServiceContract;
import dev.paddock.store.SandboxStore;
import dev.paddock.store.SandboxStores;
import dev.paddock.store.TestDatabase;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The shared contract suite against a real Docker Engine: one container per sandbox (host
 * networking, so traffic stays on loopback), the SQLite store. Skipped when no engine can be
 * reached (failed instead on CI); fails when a test leaves a Paddock container behind.
 */
class DockerContractTest extends SandboxServiceContract {
  private static DockerEngine engine;
  private static Set<String> before;
  private static String failingImage;
  private TestDatabase database;

  @BeforeAll
  static void engine() {
    engine = DockerTestEngine.require();
    before = DockerTestEngine.managedContainers(engine);
    failingImage = DockerTestEngine.alias(engine, "contract-failing");
  }

  @AfterAll
  static void removeAlias() {
    if (engine != null && failingImage != null) {
      engine.delete("/images/" + failingImage);
    }
  }

  @Override
  protected SandboxBackend newBackend() {
    return DockerTestEngine.backend(Map.of());
  }

  @Override
  protected SandboxStore newStore() {
    database = TestDatabase.sqlite();
    return SandboxStores.open(database.url(), database.user(), database.password());
  }

  @Override
  protected SandboxSpec runnableSpec() {
    return SandboxSpec.builder(DockerTestEngine.IMAGE).workingDir("/workspace").build();
  }

  /** The agent refuses an unknown option and exits 2 before it is ready. */
  @Override
  protected SandboxSpec failingSpec() {
    return SandboxSpec.builder(failingImage)
        .workingDir("/workspace")
        .command(List.of("--no-such-option-secret-detail"))
        .build();
  }

  @Override
  protected void assertNothingLeaked() {
    try {
      DockerTestEngine.assertNoNewContainers(engine, before);
    } finally {
      if (database != null) {
        database.close();
      }
    }
  }
}
