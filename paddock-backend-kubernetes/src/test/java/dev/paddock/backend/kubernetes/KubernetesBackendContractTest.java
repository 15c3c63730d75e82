package dev.paddock.backend.kubernetes;

import dev.paddock.api.SandboxSpec;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.controlplane.SandboxBackendContract;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The SPI-level contract with the Kubernetes backend, run against <strong>fabric8's mock API server
 * (CRUD mode) and a test-side fake kubelet, not a real cluster</strong>: the backend talks to the
 * mock over HTTP as it would to an API server, the {@link FakeKubelet} runs each pod's agent as a
 * local process on its own loopback address and writes the pod's status back. Pause deletes the pod
 * (its processes end) and keeps the claim, so the contract's pause check is the one for backends
 * whose pause stops processes. With {@code -Preal-cluster} and {@code KUBECONFIG} set the same
 * suite runs against that cluster.
 */
class KubernetesBackendContractTest extends SandboxBackendContract {
  private static KubernetesTestCluster cluster;

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
  protected SandboxSpec spec() {
    return SandboxSpec.builder("paddock/sandbox:bookworm").workingDir("/workspace").build();
  }

  /** The agent refuses an unknown option and exits 2 before it is ready. */
  @Override
  protected SandboxSpec exitingSpec() {
    return spec().toBuilder().command(List.of("--no-such-option-secret-detail")).build();
  }

  @Override
  protected boolean pauseKeepsProcesses() {
    return false;
  }

  /** The labels as the API server holds them on the pod. */
  @Override
  protected Optional<Map<String, String>> labelsOf(RuntimeHandle handle) {
    Pod pod =
        cluster
            .client()
            .pods()
            .inNamespace(KubernetesTestCluster.NAMESPACE)
            .withName(handle.attributes().get("pod"))
            .get();
    return Optional.of(pod == null ? Map.of() : pod.getMetadata().getLabels());
  }

  @Override
  protected void assertNothingLeaked() {
    cluster.assertNothingLeaked();
  }
}
