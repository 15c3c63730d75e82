package dev.paddock.backend.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.KeyDigest;
import dev.paddock.api.Resources;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeRequest;
import dev.paddock.api.spi.SandboxBackend;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What the backend asks the cluster for, read back from the API server: the restricted pod, the
 * Secret holding digests only, the NetworkPolicy, requests and limits, scheduling settings, and
 * that pause keeps only the claim and delete removes everything. Runs against <strong>fabric8's
 * mock API server and the fake kubelet, not a real cluster</strong>: the manifests are checked as
 * stored, since the fake applies no security context or policy itself.
 */
class KubernetesPodTest {
  private static final String KEY = "pod-test-session-key";
  private static final String ADMIN = "pod-test-admin-key";

  private static KubernetesTestCluster cluster;
  private SandboxBackend backend;
  private RuntimeHandle handle;

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
  void destroyAndCheckLeaks() {
    if (handle != null) {
      backend.destroy(handle);
    }
    backend.close();
    cluster.assertNothingLeaked();
  }

  @Test
  void thePodFollowsTheRestrictedPodSecurityStandardAndMountsNoToken() {
    start(Map.of());
    Pod pod = pod();

    assertThat(pod.getSpec().getAutomountServiceAccountToken()).isFalse();
    assertThat(pod.getSpec().getSecurityContext().getRunAsNonRoot()).isTrue();
    assertThat(pod.getSpec().getSecurityContext().getRunAsUser()).isEqualTo(1000L);
    assertThat(pod.getSpec().getSecurityContext().getSeccompProfile().getType())
        .isEqualTo("RuntimeDefault");
    for (Container c : allContainers(pod)) {
      assertThat(c.getSecurityContext().getAllowPrivilegeEscalation()).as(c.getName()).isFalse();
      assertThat(c.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
      assertThat(c.getSecurityContext().getCapabilities().getAdd()).isNullOrEmpty();
    }
    assertThat(pod.getMetadata().getLabels())
        .containsEntry("paddock.managed", "true")
        .containsEntry("paddock.sandbox-id", handle.sandboxId())
        .containsEntry("paddock.instance", KubernetesTestCluster.INSTANCE);
  }

  @Test
  void theAgentComesFromTheInitContainerAndTheDigestsFromAMountedSecretNeverEnv() {
    start(Map.of("kubernetes.agent-image", "registry.example/paddock/agent:0.1"));
    Pod pod = pod();
    Container init = pod.getSpec().getInitContainers().getFirst();
    Container sandbox = pod.getSpec().getContainers().getFirst();

    assertThat(init.getImage()).isEqualTo("registry.example/paddock/agent:0.1");
    assertThat(sandbox.getImage()).isEqualTo("paddock/sandbox:bookworm");
    assertThat(sandbox.getCommand()).containsExactly("/bin/sh", "/opt/paddock/bin/paddock-sandbox");
    assertThat(sandbox.getArgs())
        .containsSequence("--secrets-file", "/var/run/paddock/secrets/agent-secrets");
    assertThat(sandbox.getVolumeMounts())
        .filteredOn(m -> m.getMountPath().equals("/var/run/paddock/secrets"))
        .singleElement()
        .satisfies(m -> assertThat(m.getReadOnly()).isTrue());
    String everything = cluster.client().getKubernetesSerialization().asJson(pod);
    assertThat(everything)
        .doesNotContain(KeyDigest.sha256Hex(KEY), KEY, KeyDigest.sha256Hex(ADMIN), ADMIN);
    assertThat(secretText())
        .contains("session_api_key_sha256=" + KeyDigest.sha256Hex(KEY))
        .contains("admin_key_sha256=" + KeyDigest.sha256Hex(ADMIN))
        .doesNotContain(KEY + "\n");
  }

  @Test
  void ingressIsAdmittedFromTheControlPlaneOnlyAndEgressAsConfigured() {
    start(Map.of("kubernetes.egress", "dns", "kubernetes.control-plane-labels", "app=paddock-cp"));
    NetworkPolicy policy =
        client()
            .network()
            .v1()
            .networkPolicies()
            .inNamespace(KubernetesTestCluster.NAMESPACE)
            .withName("paddock-" + handle.sandboxId())
            .get();

    assertThat(policy.getSpec().getPodSelector().getMatchLabels())
        .containsEntry("paddock.sandbox-id", handle.sandboxId());
    assertThat(policy.getSpec().getPolicyTypes()).containsExactly("Ingress", "Egress");
    assertThat(
            policy
                .getSpec()
                .getIngress()
                .getFirst()
                .getFrom()
                .getFirst()
                .getPodSelector()
                .getMatchLabels())
        .isEqualTo(Map.of("app", "paddock-cp"));
    assertThat(policy.getSpec().getEgress().getFirst().getPorts())
        .extracting(p -> p.getPort().getIntVal())
        .containsOnly(53);
  }

  @Test
  void specResourcesBecomeRequestsAndLimitsAndSchedulingIsConfigurable() {
    SandboxSpec spec =
        SandboxSpec.builder("paddock/sandbox:bookworm")
            .workingDir("/workspace")
            .resources(
                new Resources(
                    OptionalDouble.of(1.5),
                    OptionalLong.of(512L << 20),
                    OptionalInt.empty(),
                    OptionalLong.of(1L << 30)))
            .build();
    start(
        spec,
        Map.of(
            "kubernetes.node-selector", "pool=sandboxes",
            "kubernetes.tolerations", "dedicated=sandboxes:NoSchedule",
            "kubernetes.runtime-class", "gvisor",
            "kubernetes.image-pull-policy", "Always"));
    Pod pod = pod();
    Container sandbox = pod.getSpec().getContainers().getFirst();

    assertThat(sandbox.getResources().getLimits().get("cpu").toString()).isEqualTo("1500m");
    assertThat(sandbox.getResources().getLimits().get("memory").getNumericalAmount().longValue())
        .isEqualTo(512L << 20);
    assertThat(sandbox.getResources().getRequests()).isEqualTo(sandbox.getResources().getLimits());
    assertThat(sandbox.getImagePullPolicy()).isEqualTo("Always");
    assertThat(pod.getSpec().getRuntimeClassName()).isEqualTo("gvisor");
    assertThat(pod.getSpec().getNodeSelector()).isEqualTo(Map.of("pool", "sandboxes"));
    assertThat(pod.getSpec().getTolerations().getFirst().getKey()).isEqualTo("dedicated");
    assertThat(pod.getSpec().getTolerations().getFirst().getEffect()).isEqualTo("NoSchedule");
    assertThat(
            client()
                .persistentVolumeClaims()
                .inNamespace(KubernetesTestCluster.NAMESPACE)
                .withName("paddock-" + handle.sandboxId() + "-workspace")
                .get()
                .getSpec()
                .getResources()
                .getRequests()
                .get("storage")
                .getNumericalAmount()
                .longValue())
        .isEqualTo(1L << 30);
  }

  @Test
  void pauseDeletesThePodKeepsTheClaimAndLeavesOnlyTheAdminDigest() {
    start(Map.of());

    backend.pause(handle);

    assertThat(pod()).isNull();
    assertThat(backend.inspect(handle).status()).isEqualTo(SandboxStatus.PAUSED);
    cluster.kubelet().ifPresent(k -> assertThat(k.runningAgents()).isZero());
    assertThat(secretText())
        .doesNotContain("session_api_key_sha256")
        .contains("admin_key_sha256=" + KeyDigest.sha256Hex(ADMIN));
    backend.resume(handle);
    assertThat(backend.inspect(handle).status()).isEqualTo(SandboxStatus.RUNNING);
  }

  @Test
  void deleteRemovesPodClaimSecretAndPolicy() {
    start(Map.of());

    backend.destroy(handle);
    handle = null;

    cluster.assertNothingLeaked();
  }

  @Test
  void startPauseResumeAndDeleteWaitOnOneWatchOfTheControlPlanesPodsNotOneEach() {
    int before = cluster.backendRequests().orElseThrow().size();
    start(Map.of());
    backend.pause(handle);
    handle = backend.resume(handle);
    backend.destroy(handle);
    String first = handle.sandboxId();
    handle =
        backend.start(
            new RuntimeRequest(
                "sb-pod-" + Long.toHexString(System.nanoTime()),
                SandboxSpec.builder("paddock/sandbox:bookworm").workingDir("/workspace").build(),
                Map.of(),
                List.of(KeyDigest.sha256Hex(KEY)),
                KeyDigest.sha256Hex(ADMIN)));

    List<String> requests = cluster.backendRequests().orElseThrow();
    List<String> watches =
        requests.subList(before, requests.size()).stream()
            .filter(r -> r.contains("watch=true"))
            .toList();
    assertThat(watches)
        .as("the backends' watch requests (sandbox %s, then %s)", first, handle.sandboxId())
        .hasSize(1)
        .allSatisfy(
            w ->
                assertThat(w)
                    .startsWith("GET /api/v1/namespaces/test/pods?")
                    .contains("labelSelector=")
                    .doesNotContain("fieldSelector="));
  }

  private void start(Map<String, String> settings) {
    start(
        SandboxSpec.builder("paddock/sandbox:bookworm").workingDir("/workspace").build(), settings);
  }

  private void start(SandboxSpec spec, Map<String, String> settings) {
    backend = new KubernetesBackendProvider().create(cluster.settings(settings));
    String id = "sb-pod-" + Long.toHexString(System.nanoTime());
    handle =
        backend.start(
            new RuntimeRequest(
                id, spec, Map.of(), List.of(KeyDigest.sha256Hex(KEY)), KeyDigest.sha256Hex(ADMIN)));
  }

  private Pod pod() {
    return client()
        .pods()
        .inNamespace(KubernetesTestCluster.NAMESPACE)
        .withName("paddock-" + handle.sandboxId())
        .get();
  }

  private String secretText() {
    Secret secret =
        client()
            .secrets()
            .inNamespace(KubernetesTestCluster.NAMESPACE)
            .withName("paddock-" + handle.sandboxId() + "-secrets")
            .get();
    return new String(
        Base64.getDecoder().decode(secret.getData().get("agent-secrets")), StandardCharsets.UTF_8);
  }

  private static List<Container> allContainers(Pod pod) {
    List<Container> all = new java.util.ArrayList<>(pod.getSpec().getInitContainers());
    all.addAll(pod.getSpec().getContainers());
    return all;
  }

  private static KubernetesClient client() {
    return cluster.client();
  }
}
