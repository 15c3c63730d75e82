package dev.paddock.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBinding;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.api.model.rbac.RoleBinding;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Kubernetes manifests under {@code deploy/kubernetes/}: each file parses, every object applies
 * to fabric8's mock API server (CRUD mode: stored and read back as the API server would, with no
 * validation beyond kind and name — so the checks that matter are made here), and what could be
 * wrong is checked against the code it must match: the Role grants exactly what the Kubernetes
 * backend does (issue 14: a pod, claim, Secret, Service and NetworkPolicy per sandbox, events
 * read), the probes name routes the server serves without a key, and every environment variable is
 * a setting the server declares, with a value its own parsing accepts ({@code paddock config}).
 */
@EnableKubernetesMockClient(crud = true)
class ManifestsTest {
  /**
   * What the Kubernetes backend (KubernetesBackend, issue 14) does in its namespace, resource by
   * resource (API group "" unless named): created with explicit names, listed by label, the pod
   * read and watched by name, the claim's paused mark and the Secret's digests patched, all deleted
   * explicitly, events listed. The Role must grant this, no more and no less: change both together.
   */
  private static final Map<String, Set<String>> BACKEND_NEEDS =
      Map.of(
          "pods", Set.of("create", "delete", "get", "list", "watch"),
          "persistentvolumeclaims", Set.of("create", "delete", "get", "list", "patch"),
          "secrets", Set.of("create", "delete", "get", "list", "patch"),
          "events", Set.of("list"),
          "networking.k8s.io/networkpolicies", Set.of("create", "delete", "list"));

  private static final Path OPENAPI =
      Manifests.CHECKOUT.resolve(
          "paddock-server/src/main/resources/dev/paddock/server/openapi.json");
  private static final Pattern SETTING_LINE =
      Pattern.compile("^([^#\\s][^ ]*) = ", Pattern.MULTILINE);

  KubernetesClient client;

  private final Manifests manifests = Manifests.load();

  @Test
  void everyManifestParsesAndAppliesToTheApiServer() {
    assertThat(manifests.byFile()).isNotEmpty();
    manifests
        .byFile()
        .forEach((file, objects) -> assertThat(objects).as(file.toString()).isNotEmpty());
    for (HasMetadata object : manifests.all()) {
      client.resource(object).create();
    }
    for (HasMetadata object : manifests.all()) {
      HasMetadata stored = client.resource(object).get();
      assertThat(stored).as(object.getKind() + " " + object.getMetadata().getName()).isNotNull();
      assertThat(stored.getMetadata().getLabels())
          .containsEntry("app.kubernetes.io/part-of", "paddock");
    }
    assertThat(client.apps().deployments().inNamespace("paddock").list().getItems())
        .extracting(d -> d.getMetadata().getName())
        .containsExactly("paddock-control-plane");
  }

  @Test
  void everythingLivesInOneNamespaceWithNoClusterWideGrant() {
    String namespace = manifests.ofKind(Namespace.class).get(0).getMetadata().getName();
    assertThat(manifests.all())
        .filteredOn(o -> !(o instanceof Namespace))
        .allSatisfy(o -> assertThat(o.getMetadata().getNamespace()).isEqualTo(namespace));
    assertThat(manifests.ofKind(ClusterRole.class)).isEmpty();
    assertThat(manifests.ofKind(ClusterRoleBinding.class)).isEmpty();
  }

  @Test
  void roleGrantsExactlyWhatTheKubernetesBackendDoes() {
    Role role = manifests.named(Role.class, "paddock-control-plane");
    Map<String, Set<String>> granted = new TreeMap<>();
    for (PolicyRule rule : role.getRules()) {
      assertThat(rule.getResourceNames()).as("rules name no single objects").isNullOrEmpty();
      assertThat(rule.getNonResourceURLs()).isNullOrEmpty();
      for (String group : rule.getApiGroups()) {
        for (String resource : rule.getResources()) {
          String key = group.isEmpty() ? resource : group + "/" + resource;
          granted.computeIfAbsent(key, k -> new TreeSet<>()).addAll(rule.getVerbs());
        }
      }
    }
    assertThat(granted).isEqualTo(new TreeMap<>(BACKEND_NEEDS));
  }

  @Test
  void roleIsBoundToTheAccountTheControlPlaneRunsAs() {
    RoleBinding binding = manifests.named(RoleBinding.class, "paddock-control-plane");
    PodSpec pod = manifests.controlPlane().getSpec().getTemplate().getSpec();
    assertThat(binding.getRoleRef().getKind()).isEqualTo("Role");
    assertThat(manifests.named(Role.class, binding.getRoleRef().getName())).isNotNull();
    assertThat(binding.getSubjects())
        .singleElement()
        .satisfies(
            s -> {
              assertThat(s.getKind()).isEqualTo("ServiceAccount");
              assertThat(s.getName()).isEqualTo(pod.getServiceAccountName());
              assertThat(s.getNamespace()).isEqualTo(binding.getMetadata().getNamespace());
            });
    assertThat(manifests.named(ServiceAccount.class, pod.getServiceAccountName())).isNotNull();
  }

  @Test
  void probesPointAtRoutesTheServerServesWithoutAKey() throws IOException {
    JsonNode paths = new ObjectMapper().readTree(OPENAPI.toFile()).path("paths");
    Container container = manifests.controlPlaneContainer();
    assertThat(container.getLivenessProbe()).isNotNull();
    assertThat(container.getReadinessProbe()).isNotNull();
    int port = Integer.parseInt(manifests.controlPlaneEnvironment().get("PADDOCK_PORT"));
    for (Probe probe : manifests.probes()) {
      String path = probe.getHttpGet().getPath();
      JsonNode get = paths.path(path).path("get");
      assertThat(get.isObject()).as("GET " + path + " is a route of the server").isTrue();
      assertThat(get.path("security").isArray() && get.path("security").isEmpty())
          .as("GET " + path + " needs no key (a kubelet has none)")
          .isTrue();
      assertThat(containerPort(container, probe.getHttpGet().getPort().getStrVal()))
          .as("the probe's port is the one the server listens on (PADDOCK_PORT)")
          .isEqualTo(port);
    }
  }

  @Test
  void serviceReachesTheControlPlanePods() {
    Service service = manifests.named(Service.class, "paddock-control-plane");
    Deployment deployment = manifests.controlPlane();
    Map<String, String> podLabels = deployment.getSpec().getTemplate().getMetadata().getLabels();
    assertThat(podLabels).containsAllEntriesOf(service.getSpec().getSelector());
    assertThat(podLabels).containsAllEntriesOf(deployment.getSpec().getSelector().getMatchLabels());
    Container container = manifests.controlPlaneContainer();
    service
        .getSpec()
        .getPorts()
        .forEach(
            p ->
                assertThat(containerPort(container, p.getTargetPort().getStrVal()))
                    .isEqualTo(p.getPort()));
  }

  @Test
  void controlPlanePodsCarryTheLabelsTheSandboxesNetworkPolicyAdmits() {
    // The Kubernetes backend's default kubernetes.control-plane-labels.
    assertThat(manifests.controlPlane().getSpec().getTemplate().getMetadata().getLabels())
        .containsEntry("app.kubernetes.io/name", "paddock");
  }

  @Test
  void controlPlaneRunsSeveralRestrictedReplicasWithResources() throws IOException {
    Deployment deployment = manifests.controlPlane();
    assertThat(deployment.getSpec().getReplicas()).isGreaterThanOrEqualTo(2);
    PodSpec pod = deployment.getSpec().getTemplate().getSpec();
    assertThat(pod.getSecurityContext().getRunAsNonRoot()).isTrue();
    assertThat(pod.getSecurityContext().getSeccompProfile().getType()).isEqualTo("RuntimeDefault");
    Container container = manifests.controlPlaneContainer();
    assertThat(container.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
    assertThat(container.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
    assertThat(container.getResources().getRequests()).containsKeys("cpu", "memory");
    assertThat(container.getResources().getLimits()).containsKey("memory");
    assertThat(container.getImage()).isEqualTo("paddock/control-plane:" + projectVersion());
  }

  @Test
  void databaseConnectionAndKeysComeFromSecrets() {
    Container container = manifests.controlPlaneContainer();
    for (String name :
        List.of(
            "PADDOCK_DATABASE_URL",
            "PADDOCK_DATABASE_USER",
            "PADDOCK_DATABASE_PASSWORD",
            "PADDOCK_MASTER_SECRET",
            "PADDOCK_ADMIN_KEY")) {
      assertThat(container.getEnv())
          .as(name)
          .anySatisfy(
              v -> {
                assertThat(v.getName()).isEqualTo(name);
                assertThat(v.getValueFrom().getSecretKeyRef()).isNotNull();
              });
    }
    assertThat(manifests.controlPlaneEnvironment().get("PADDOCK_DATABASE_URL"))
        .startsWith("jdbc:postgresql://");
  }

  @Test
  void everyVariableIsASettingTheServerAcceptsAsGiven(@TempDir Path home) throws Exception {
    Map<String, String> env = manifests.controlPlaneEnvironment();
    assertThat(env).containsEntry("RUNTIME", "kubernetes");
    ProcessBuilder builder =
        new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar",
                Manifests.CHECKOUT.resolve("paddock-cli/target/paddock-cli-all.jar").toString(),
                "config")
            .redirectErrorStream(true);
    builder.environment().clear();
    builder.environment().put("PATH", System.getenv("PATH"));
    builder.environment().put("HOME", home.toString());
    builder.environment().putAll(env);
    // The data dir of the manifests is the container's; here it must be one this test may read.
    builder.environment().put("PADDOCK_DATA_DIR", home.resolve("data").toString());
    Process config = builder.start();
    String output = new String(config.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(config.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(config.exitValue()).as(output).isZero();
    assertThat(output).as("no unknown or misspelt setting").doesNotContain("warning");
    List<String> declared = new ArrayList<>();
    Matcher m = SETTING_LINE.matcher(output);
    while (m.find()) {
      declared.add(m.group(1));
    }
    assertThat(env.keySet()).allSatisfy(name -> assertThat(declared).contains(name));
  }

  private static int containerPort(Container container, String name) {
    return container.getPorts().stream()
        .filter(p -> name.equals(p.getName()))
        .map(ContainerPort::getContainerPort)
        .findFirst()
        .orElseThrow(() -> new AssertionError("no container port named " + name));
  }

  private static String projectVersion() throws IOException {
    String pom = Files.readString(Manifests.CHECKOUT.resolve("pom.xml"));
    Matcher m =
        Pattern.compile("<artifactId>paddock-parent</artifactId>\\s*<version>([^<]+)</version>")
            .matcher(pom);
    assertThat(m.find()).isTrue();
    return m.group(1);
  }
}
