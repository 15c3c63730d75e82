package dev.paddock.backend.kubernetes;

import dev.paddock.api.Resources;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.spi.RuntimeRequest;
import dev.paddock.backend.kit.RuntimeBundle;
import dev.paddock.backend.kit.protocol.AgentSecrets;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceRequirements;
import io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.SecurityContextBuilder;
import io.fabric8.kubernetes.api.model.Toleration;
import io.fabric8.kubernetes.api.model.TolerationBuilder;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRule;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyEgressRuleBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.OptionalLong;

/**
 * The objects a sandbox owns, all named after it and labelled {@code paddock.managed}, {@code
 * paddock.sandbox-id} and {@code paddock.instance}: its workspace claim, its Secret (the key
 * digests, mounted as the agent's {@code --secrets-file}), its NetworkPolicy (ingress from the
 * control plane only) and its pod (restricted Pod Security Standard: non-root, no privilege
 * escalation, every capability dropped, seccomp {@code RuntimeDefault}, no service-account token).
 *
 * <p>Only explicit names (never {@code generateName}) and plain objects, so the same manifests work
 * against fabric8's mock server in CRUD mode.
 */
final class SandboxObjects {
  static final String LABEL_MANAGED = "paddock.managed";
  static final String LABEL_SANDBOX = "paddock.sandbox-id";
  static final String LABEL_INSTANCE = "paddock.instance";
  static final String ANNOTATION_SPEC = "paddock.dev/spec-id";

  /** On the claim: the pod to create again on resume (its JSON). */
  static final String ANNOTATION_POD = "paddock.dev/pod";

  /** On the claim while the sandbox is paused (its pod deleted on purpose). */
  static final String ANNOTATION_PAUSED = "paddock.dev/paused";

  static final String SECRETS_KEY = "agent-secrets";
  static final String SECRETS_DIR = "/var/run/paddock/secrets";
  static final String AGENT_CONTAINER = "sandbox";
  static final String INIT_CONTAINER = "paddock-agent";

  private static final String RUNTIME_VOLUME = "paddock-runtime";
  private static final String WORKSPACE_VOLUME = "workspace";
  private static final String SECRETS_VOLUME = "paddock-secrets";
  private static final String STATE_VOLUME = "paddock-state";
  private static final String HOME_VOLUME = "home";
  private static final String STATE_DIR = "/var/lib/paddock-agent";
  private static final String HOME_DIR = "/home/paddock";
  private static final String INIT_TARGET = "/paddock-runtime";

  private static final KubernetesSerialization JSON = new KubernetesSerialization();

  private final KubernetesSettings settings;

  SandboxObjects(KubernetesSettings settings) {
    this.settings = settings;
  }

  /** The pod a claim was made for, to create again on resume; empty for a claim not of ours. */
  static java.util.Optional<Pod> podOf(PersistentVolumeClaim claim) {
    Map<String, String> annotations = claim.getMetadata().getAnnotations();
    String json = annotations == null ? null : annotations.get(ANNOTATION_POD);
    return json == null
        ? java.util.Optional.empty()
        : java.util.Optional.of(JSON.unmarshal(json, Pod.class));
  }

  static String podName(String sandboxId) {
    return "paddock-" + sandboxId;
  }

  static String claimName(String sandboxId) {
    return "paddock-" + sandboxId + "-workspace";
  }

  static String secretName(String sandboxId) {
    return "paddock-" + sandboxId + "-secrets";
  }

  static String policyName(String sandboxId) {
    return "paddock-" + sandboxId;
  }

  static String workspace(SandboxSpec spec) {
    String dir = spec.workingDir();
    return dir.isBlank() || dir.equals(".") ? "/workspace" : dir;
  }

  /** The labels every object of the sandbox carries. */
  Map<String, String> labels(String sandboxId) {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put(LABEL_MANAGED, "true");
    labels.put(LABEL_SANDBOX, sandboxId);
    labels.put(LABEL_INSTANCE, settings.instance());
    return labels;
  }

  /** The selector of this control plane's objects (equality only, as the mock server parses). */
  Map<String, String> ours() {
    return Map.of(LABEL_MANAGED, "true", LABEL_INSTANCE, settings.instance());
  }

  private ObjectMeta meta(String name, String sandboxId) {
    return new ObjectMetaBuilder().withName(name).withLabels(labels(sandboxId)).build();
  }

  PersistentVolumeClaim claim(RuntimeRequest request, Pod pod) {
    long bytes = request.spec().resources().diskBytes().orElse(settings.workspaceBytes());
    ObjectMeta meta = meta(claimName(request.sandboxId()), request.sandboxId());
    meta.setAnnotations(Map.of(ANNOTATION_POD, JSON.asJson(pod)));
    return new PersistentVolumeClaimBuilder()
        .withMetadata(meta)
        .withNewSpec()
        .withAccessModes("ReadWriteOnce")
        .withStorageClassName(settings.storageClass().orElse(null))
        .withNewResources()
        .addToRequests("storage", new Quantity(Long.toString(bytes)))
        .endResources()
        .endSpec()
        .build();
  }

  /** The agent's secrets file: digests only, never a key. */
  Secret secret(String sandboxId, List<String> sessionDigests, String adminDigest) {
    String lines = AgentSecrets.lines(sessionDigests, adminDigest);
    String encoded = Base64.getEncoder().encodeToString(lines.getBytes(StandardCharsets.UTF_8));
    return new SecretBuilder()
        .withMetadata(meta(secretName(sandboxId), sandboxId))
        .withType("Opaque")
        .withData(Map.of(SECRETS_KEY, encoded))
        .build();
  }

  /** Ingress from the control plane's pods to the agent port only; egress as configured. */
  NetworkPolicy policy(String sandboxId) {
    List<String> types = new ArrayList<>(List.of("Ingress"));
    List<NetworkPolicyEgressRule> egress = new ArrayList<>();
    if (!settings.egress().equals("all")) {
      types.add("Egress");
      if (settings.egress().equals("dns")) {
        egress.add(dnsOnly());
      }
    }
    return new NetworkPolicyBuilder()
        .withMetadata(meta(policyName(sandboxId), sandboxId))
        .withNewSpec()
        .withNewPodSelector()
        .withMatchLabels(Map.of(LABEL_SANDBOX, sandboxId, LABEL_MANAGED, "true"))
        .endPodSelector()
        .withPolicyTypes(types)
        .addNewIngress()
        .addNewFrom()
        .withNewPodSelector()
        .withMatchLabels(settings.controlPlaneLabels())
        .endPodSelector()
        .endFrom()
        .addNewPort()
        .withProtocol("TCP")
        .withNewPort(settings.agentPort())
        .endPort()
        .endIngress()
        .withEgress(egress)
        .endSpec()
        .build();
  }

  private static NetworkPolicyEgressRule dnsOnly() {
    return new NetworkPolicyEgressRuleBuilder()
        .addNewPort()
        .withProtocol("UDP")
        .withNewPort(53)
        .endPort()
        .addNewPort()
        .withProtocol("TCP")
        .withNewPort(53)
        .endPort()
        .build();
  }

  Pod pod(RuntimeRequest request) {
    String id = request.sandboxId();
    ObjectMeta meta = meta(podName(id), id);
    meta.setAnnotations(Map.of(ANNOTATION_SPEC, request.spec().id()));
    return new PodBuilder()
        .withMetadata(meta)
        .withNewSpec()
        .withRestartPolicy("Never")
        .withAutomountServiceAccountToken(false)
        .withEnableServiceLinks(false)
        .withTerminationGracePeriodSeconds(settings.stopGrace().toSeconds())
        .withRuntimeClassName(settings.runtimeClass().orElse(null))
        .withNodeSelector(settings.nodeSelector().isEmpty() ? null : settings.nodeSelector())
        .withTolerations(tolerations())
        .withNewSecurityContext()
        .withRunAsNonRoot(true)
        .withRunAsUser(settings.uid())
        .withRunAsGroup(settings.gid())
        .withFsGroup(settings.gid())
        .withNewSeccompProfile()
        .withType("RuntimeDefault")
        .endSeccompProfile()
        .endSecurityContext()
        .withInitContainers(settings.baked() ? List.of() : List.of(copyAgent()))
        .withContainers(sandbox(request))
        .withVolumes(volumes(id))
        .endSpec()
        .build();
  }

  // Copies the runtime bundle out of the agent image into the pod's shared volume; the user's image
  // then runs it from there, read-only. The agent image needs sh and cp (busybox is enough).
  private Container copyAgent() {
    return new ContainerBuilder()
        .withName(INIT_CONTAINER)
        .withImage(settings.agentImage())
        .withImagePullPolicy(settings.pullPolicy())
        .withCommand("sh", "-c", "cp -R " + RuntimeBundle.MOUNT + "/. " + INIT_TARGET + "/")
        .withSecurityContext(restricted())
        .withVolumeMounts(mount(RUNTIME_VOLUME, INIT_TARGET, false))
        .withResources(
            new ResourceRequirementsBuilder()
                .addToRequests("cpu", new Quantity("100m"))
                .addToRequests("memory", new Quantity("64Mi"))
                .addToLimits("memory", new Quantity("256Mi"))
                .build())
        .build();
  }

  private Container sandbox(RuntimeRequest request) {
    SandboxSpec spec = request.spec();
    String workspace = workspace(spec);
    List<VolumeMount> mounts = new ArrayList<>();
    mounts.add(mount(RUNTIME_VOLUME, RuntimeBundle.MOUNT, true));
    mounts.add(mount(WORKSPACE_VOLUME, workspace, false));
    mounts.add(mount(SECRETS_VOLUME, SECRETS_DIR, true));
    mounts.add(mount(STATE_VOLUME, STATE_DIR, false));
    mounts.add(mount(HOME_VOLUME, HOME_DIR, false));
    if (settings.baked()) {
      mounts.removeFirst();
    }
    return new ContainerBuilder()
        .withName(AGENT_CONTAINER)
        .withImage(spec.imageReference())
        .withImagePullPolicy(settings.pullPolicy())
        .withCommand("/bin/sh", RuntimeBundle.MOUNT + "/bin/paddock-sandbox")
        .withArgs(agentArgs(spec, workspace))
        .withWorkingDir(workspace)
        .withEnv(env(request))
        .addNewPort()
        .withName("agent")
        .withContainerPort(settings.agentPort())
        .withProtocol("TCP")
        .endPort()
        .withSecurityContext(restricted())
        .withResources(resources(spec.resources()))
        .withVolumeMounts(mounts)
        // On a failed start the kubelet puts the agent's last output here: no log API call needed.
        .withTerminationMessagePolicy("FallbackToLogsOnError")
        .build();
  }

  private List<String> agentArgs(SandboxSpec spec, String workspace) {
    List<String> args = new ArrayList<>();
    args.addAll(List.of("--host", "0.0.0.0", "--port", Integer.toString(settings.agentPort())));
    args.addAll(List.of("--workspace", workspace, "--events-dir", STATE_DIR + "/events"));
    args.addAll(List.of("--secrets-file", SECRETS_DIR + "/" + SECRETS_KEY));
    // One uid for the agent and its commands (restricted pods cannot switch user): the file
    // routes still reach the workspace and the home only.
    args.addAll(List.of("--home", HOME_DIR, "--file-root", workspace, "--file-root", HOME_DIR));
    args.addAll(spec.command());
    return args;
  }

  private List<EnvVar> env(RuntimeRequest request) {
    Map<String, String> variables = new LinkedHashMap<>(request.spec().initialEnv());
    variables.putAll(request.env());
    variables.put("PADDOCK_MANAGED", "true");
    variables.put("PADDOCK_SANDBOX_ID", request.sandboxId());
    List<EnvVar> env = new ArrayList<>();
    variables.forEach((name, value) -> env.add(new EnvVar(name, value, null)));
    return env;
  }

  private static SecurityContext restricted() {
    return new SecurityContextBuilder()
        .withAllowPrivilegeEscalation(false)
        .withRunAsNonRoot(true)
        .withNewCapabilities()
        .withDrop("ALL")
        .endCapabilities()
        .withNewSeccompProfile()
        .withType("RuntimeDefault")
        .endSeccompProfile()
        .build();
  }

  /** Requests equal to limits (Guaranteed QoS for memory: no eviction surprise under pressure). */
  private ResourceRequirements resources(Resources spec) {
    Resources defaults = settings.resources();
    OptionalDouble cpus = spec.cpus().isPresent() ? spec.cpus() : defaults.cpus();
    OptionalLong memory =
        spec.memoryBytes().isPresent() ? spec.memoryBytes() : defaults.memoryBytes();
    Map<String, Quantity> amounts = new LinkedHashMap<>();
    cpus.ifPresent(c -> amounts.put("cpu", new Quantity(Math.round(c * 1000) + "m")));
    memory.ifPresent(bytes -> amounts.put("memory", new Quantity(Long.toString(bytes))));
    return new ResourceRequirementsBuilder().withRequests(amounts).withLimits(amounts).build();
  }

  private List<Toleration> tolerations() {
    return settings.tolerations().stream()
        .map(
            t ->
                new TolerationBuilder()
                    .withKey(t.key())
                    .withOperator(t.value().isPresent() ? "Equal" : "Exists")
                    .withValue(t.value().orElse(null))
                    .withEffect(t.effect())
                    .build())
        .toList();
  }

  private List<Volume> volumes(String sandboxId) {
    List<Volume> volumes = new ArrayList<>();
    if (!settings.baked()) {
      volumes.add(
          new VolumeBuilder().withName(RUNTIME_VOLUME).withNewEmptyDir().endEmptyDir().build());
    }
    volumes.add(
        new VolumeBuilder()
            .withName(WORKSPACE_VOLUME)
            .withNewPersistentVolumeClaim()
            .withClaimName(claimName(sandboxId))
            .endPersistentVolumeClaim()
            .build());
    volumes.add(
        new VolumeBuilder()
            .withName(SECRETS_VOLUME)
            .withNewSecret()
            .withSecretName(secretName(sandboxId))
            .withDefaultMode(0440)
            .endSecret()
            .build());
    volumes.add(new VolumeBuilder().withName(STATE_VOLUME).withNewEmptyDir().endEmptyDir().build());
    volumes.add(new VolumeBuilder().withName(HOME_VOLUME).withNewEmptyDir().endEmptyDir().build());
    return volumes;
  }

  private static VolumeMount mount(String volume, String path, boolean readOnly) {
    VolumeMount mount = new VolumeMount();
    mount.setName(volume);
    mount.setMountPath(path);
    mount.setReadOnly(readOnly);
    return mount;
  }
}
