package dev.paddock.backend.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.paddock.api.KeyDigest;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeRequest;
import dev.paddock.api.spi.RuntimeStartException;
import dev.paddock.api.spi.SandboxBackend;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Start failures as a cluster reports them, classified into safe messages. Runs against
 * <strong>fabric8's mock API server and the fake kubelet, not a real cluster</strong>: the fake
 * writes the kubelet's and the scheduler's own words (waiting reasons, the {@code PodScheduled}
 * condition, a {@code FailedScheduling} event) for pods of the failing images, and each test checks
 * that users see only the safe text while the raw detail keeps what the cluster said, and that the
 * half-made sandbox is removed.
 */
class KubernetesStartFailureTest {
  private static KubernetesTestCluster cluster;
  private SandboxBackend backend;

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

  @AfterEach
  void closeAndCheckLeaks() {
    if (backend != null) {
      backend.close();
    }
    cluster.assertNothingLeaked();
  }

  @Test
  void anImageThatCannotBePulledIsImageMissing() {
    String image = "registry.invalid/team/nope:1";
    fails(
        image,
        FakeKubelet.Failure.waiting(
            "ImagePullBackOff",
            "Back-off pulling image \""
                + image
                + "\": ErrImagePull: failed to resolve reference \""
                + image
                + "\": dial tcp: lookup registry.invalid: no such host"),
        e -> {
          assertThat(e.failure().kind()).isEqualTo(RuntimeFailure.Kind.IMAGE_MISSING);
          assertThat(e.failure().rawDetail()).contains("ImagePullBackOff", "registry.invalid");
        });
  }

  @Test
  void anImageThatRunsAsRootIsAConfigErrorUnderTheRestrictedPolicy() {
    fails(
        "example/root-only:1",
        FakeKubelet.Failure.waiting(
            "CreateContainerConfigError",
            "container has runAsNonRoot and image will run as root (pod:"
                + " \"paddock-sb-x_test(0f1e)\", container: sandbox)"),
        e -> {
          assertThat(e.failure().kind()).isEqualTo(PodDiagnosis.CONFIG_ERROR);
          assertThat(e.failure().rawDetail()).contains("runAsNonRoot");
        });
  }

  @Test
  void aContainerTheRuntimeCannotCreateIsACreateError() {
    fails(
        "example/no-shell:1",
        FakeKubelet.Failure.waiting(
            "CreateContainerError",
            "Error: failed to create containerd task: OCI runtime create failed: exec:"
                + " \"/bin/sh\": stat /bin/sh: no such file or directory: unknown"),
        e -> assertThat(e.failure().kind()).isEqualTo(PodDiagnosis.CREATE_ERROR));
  }

  @Test
  void aPodNoNodeHasRoomForNamesTheScarceResourcesOnly() {
    fails(
        "example/big:1",
        FakeKubelet.Failure.unschedulable(
            "0/3 nodes are available: 2 Insufficient cpu, 1 Insufficient memory. preemption: 0/3"
                + " nodes are available: 3 No preemption victims found for incoming pod."),
        e -> {
          assertThat(e.failure().kind()).isEqualTo(PodDiagnosis.INSUFFICIENT);
          assertThat(e.failure().safeMessage())
              .isEqualTo(
                  "No node has enough free cpu and memory for the sandbox right now. Please try"
                      + " again in a few minutes.");
          assertThat(e.failure().rawDetail()).contains("0/3 nodes are available");
        });
  }

  @Test
  void aPodOnlyTaintedNodesCouldRunIsAnUntoleratedTaint() {
    fails(
        "example/tainted:1",
        FakeKubelet.Failure.unschedulable(
            "0/1 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu-team-a}."
                + " preemption: 0/1 nodes are available: 1 Preemption is not helpful for"
                + " scheduling."),
        e -> {
          assertThat(e.failure().kind()).isEqualTo(PodDiagnosis.UNTOLERATED_TAINT);
          assertThat(e.failure().safeMessage()).doesNotContain("gpu-team-a");
        });
  }

  @Test
  void aPodMatchingNoNodeIsUnschedulable() {
    fails(
        "example/pinned:1",
        FakeKubelet.Failure.unschedulable(
            "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector."),
        e -> assertThat(e.failure().kind()).isEqualTo(PodDiagnosis.UNSCHEDULABLE));
  }

  @Test
  void aStartWhoseSecretIsTakenRemovesWhatItMadeAndNothingElse() {
    // The claim, Secret and NetworkPolicy are created at once: when one of them fails, the start
    // must undo the others it made, and must not delete an object that was there before it.
    backend = new KubernetesBackendProvider().create(cluster.settings(Map.of()));
    String id = "sb-taken-" + Long.toHexString(System.nanoTime());
    String secretName = SandboxObjects.secretName(id);
    var client = cluster.client();
    client
        .secrets()
        .inNamespace(KubernetesTestCluster.NAMESPACE)
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withName(secretName)
                .endMetadata()
                .addToStringData("someone-else", "keep me")
                .build())
        .create();
    try {
      RuntimeRequest request = request(id, "example/any:1");
      assertThatThrownBy(() -> backend.start(request))
          .isInstanceOfSatisfying(
              RuntimeStartException.class,
              e -> {
                assertThat(e.failure().kind()).isEqualTo(KubernetesBackend.API_ERROR);
                assertThat(e.failure().rawDetail()).contains("409");
              });
      var ns = KubernetesTestCluster.NAMESPACE;
      assertThat(
              client
                  .persistentVolumeClaims()
                  .inNamespace(ns)
                  .withName(SandboxObjects.claimName(id))
                  .get())
          .as("the claim this start made")
          .isNull();
      assertThat(
              client
                  .network()
                  .networkPolicies()
                  .inNamespace(ns)
                  .withName(SandboxObjects.policyName(id))
                  .get())
          .as("the policy this start made")
          .isNull();
      assertThat(client.pods().inNamespace(ns).withName(SandboxObjects.podName(id)).get()).isNull();
      var kept = client.secrets().inNamespace(ns).withName(secretName).get();
      assertThat(kept).as("the Secret that was there before").isNotNull();
      assertThat(kept.getMetadata().getLabels()).isNullOrEmpty();
    } finally {
      client.secrets().inNamespace(KubernetesTestCluster.NAMESPACE).withName(secretName).delete();
    }
  }

  @Test
  void aStartInterruptedWhileItWaitsRemovesAllItMadeAndKeepsTheInterrupt() throws Exception {
    // fabric8 refuses calls while the thread's interrupt flag is set: the clean-up must still
    // reach the API, and the caller must still learn it was interrupted.
    Assumptions.assumeTrue(cluster.kubelet().isPresent(), "needs a pod that stays pending");
    String image = "example/pending:1";
    cluster
        .kubelet()
        .orElseThrow()
        .failImage(image, FakeKubelet.Failure.unschedulable("0/1 nodes are available."));
    backend =
        new KubernetesBackendProvider()
            .create(cluster.settings(Map.of("kubernetes.ready-timeout", "60s")));
    String id = "sb-interrupted-" + Long.toHexString(System.nanoTime());
    RuntimeRequest request = request(id, image);
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    AtomicBoolean stillInterrupted = new AtomicBoolean();
    Thread starter =
        Thread.ofPlatform()
            .start(
                () -> {
                  try {
                    backend.start(request);
                  } catch (RuntimeException e) {
                    thrown.set(e);
                    stillInterrupted.set(Thread.currentThread().isInterrupted());
                  }
                });
    var pod =
        cluster
            .client()
            .pods()
            .inNamespace(KubernetesTestCluster.NAMESPACE)
            .withName(SandboxObjects.podName(id));
    Awaitility.await("the pod reported pending")
        .atMost(Duration.ofSeconds(20))
        .until(() -> pod.get() != null && pod.get().getStatus() != null);
    starter.interrupt();
    starter.join(Duration.ofSeconds(30));

    assertThat(starter.isAlive()).as("the start still waits").isFalse();
    assertThat(thrown.get()).isInstanceOf(RuntimeStartException.class);
    assertThat(stillInterrupted).as("the interrupt kept for the caller").isTrue();
    assertThat(cluster.managedObjects()).as("what the start made").isEmpty();
  }

  /** Starts a sandbox of {@code image}, whose pods report {@code failure}; checks what it threw. */
  private void fails(
      String image, FakeKubelet.Failure failure, Consumer<RuntimeStartException> check) {
    Assumptions.assumeTrue(
        cluster.kubelet().isPresent(),
        "a real cluster reports its own failures, not scripted ones");
    cluster.kubelet().orElseThrow().failImage(image, failure);
    backend =
        new KubernetesBackendProvider()
            .create(cluster.settings(Map.of("kubernetes.ready-timeout", "2s")));
    String id = "sb-fail-" + Long.toHexString(System.nanoTime());
    RuntimeRequest request = request(id, image);

    assertThatThrownBy(() -> backend.start(request))
        .isInstanceOfSatisfying(
            RuntimeStartException.class,
            e -> {
              check.accept(e);
              assertThat(e.failure().safeMessage()).doesNotContain(image, "127.", "paddock-sb");
            });
    assertThat(backend.list()).extracting(RuntimeHandle::sandboxId).doesNotContain(id);
  }

  /** A start of sandbox {@code id} on {@code image}, with one test key as session and admin key. */
  private static RuntimeRequest request(String id, String image) {
    String digest = KeyDigest.sha256Hex("failure-test-key");
    return new RuntimeRequest(
        id,
        SandboxSpec.builder(image).workingDir("/workspace").build(),
        Map.of(),
        List.of(digest),
        digest);
  }
}
