package dev.paddock.backend.kubernetes;

import dev.paddock.api.SandboxSpec;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.controlplane.SandboxServiceContract;
import dev.paddock.store.SandboxStore;
import dev.paddock.store.SandboxStores;
import dev.paddock.store.TestDatabase;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The shared service contract (the control plane over the SQLite store) with the Kubernetes
 * backend, run against <strong>fabric8's mock API server (CRUD mode) and a test-side fake kubelet,
 * not a real cluster</strong> (see {@link KubernetesTestCluster}). Fails when a test leaves an
 * object labelled {@code paddock.managed}, an agent process or a claim directory behind.
 */
class KubernetesServiceContractTest extends SandboxServiceContract {
  private static KubernetesTestCluster cluster;
  private TestDatabase database;

  @BeforeAll
  static void startCluster() {
    cluster = KubernetesTestCluster.start();
  }

  @AfterAll
  static void stopCluster() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Override
  protected SandboxBackend newBackend() {
    return new KubernetesBackendProvider().create(cluster.settings(Map.of()));
  }

  @Override
  protected SandboxStore newStore() {
    database = TestDatabase.sqlite();
    return SandboxStores.open(database.url(), database.user(), database.password());
  }

  @Override
  protected SandboxSpec runnableSpec() {
    return SandboxSpec.builder("paddock/sandbox:bookworm").workingDir("/workspace").build();
  }

  /** The agent refuses an unknown option and exits 2 before it is ready. */
  @Override
  protected SandboxSpec failingSpec() {
    return SandboxSpec.builder("exits-2")
        .image("paddock/sandbox:bookworm")
        .workingDir("/workspace")
        .command(List.of("--no-such-option-secret-detail"))
        .build();
  }

  /** Pause deletes the pod (its processes end) and keeps the claim with the workspace. */
  @Override
  protected boolean pauseKeepsProcesses() {
    return false;
  }

  @Override
  protected void assertNothingLeaked() {
    try {
      cluster.assertNothingLeaked();
    } finally {
      if (database != null) {
        database.close();
      }
    }
  }
}
