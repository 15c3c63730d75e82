package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.backend.kubernetes.FakeKubelet;
import dev.paddock.backend.kubernetes.KubernetesTestCluster;
import java.io.IOException;
import java.time.Duration;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * {@link TwoReplicaContract} on the Kubernetes backend: two real {@code paddock server} processes
 * with {@code RUNTIME=kubernetes} on one PostgreSQL, against fabric8's mock API server in CRUD mode
 * and the fake kubelet of {@code paddock-backend-kubernetes}'s test-jar, which runs each pod's
 * agent as a process of this JVM. <b>Not a real cluster</b> (none can run on our machines): no
 * scheduler, image pull or container runtime. Both replicas reach the same API server, so either
 * finds the pods the other made. Leak check: nothing labelled {@code paddock.managed} left in the
 * namespace, no agent running, no claim directory left.
 */
class KubernetesTwoReplicaTest extends TwoReplicaContract {
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
  protected Map<String, String> backendSettings() {
    Map<String, String> settings = new java.util.HashMap<>(cluster.settings(Map.of()));
    settings.put("RUNTIME", "kubernetes");
    return settings;
  }

  @Override
  protected long agentPid(String sandboxId) throws IOException {
    return Awaitility.await("the agent of " + sandboxId)
        .atMost(Duration.ofSeconds(30))
        .until(() -> kubelet().agentPid(sandboxId), java.util.OptionalLong::isPresent)
        .getAsLong();
  }

  @Override
  protected void assertNothingLeaked() {
    Awaitility.await("nothing of the sandboxes left in the cluster")
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(100))
        .untilAsserted(
            () -> {
              assertThat(cluster.managedObjects()).as("objects left behind").isEmpty();
              assertThat(kubelet().runningAgents()).as("agents left running").isZero();
              assertThat(kubelet().claimDirectories()).as("claim directories left").isEmpty();
            });
  }

  private static FakeKubelet kubelet() {
    return cluster.kubelet().orElseThrow();
  }
}
