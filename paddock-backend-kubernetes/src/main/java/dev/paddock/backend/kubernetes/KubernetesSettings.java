package dev.paddock.backend.kubernetes;

import dev.paddock.api.KeyDigest;
import dev.paddock.api.Resources;
import dev.paddock.api.settings.CommonSettings;
import dev.paddock.api.settings.Setting;
import dev.paddock.api.settings.Settings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Kubernetes backend's settings, declared in {@link #DECLARED} and read once from the control
 * plane's flattened settings. Every setting {@code kubernetes.x-y} may also be given as the
 * environment variable {@code PADDOCK_KUBERNETES_X_Y}.
 *
 * @param apiUrl the API server ({@code kubernetes.api-url}); empty: the kubeconfig ({@code
 *     KUBECONFIG}, {@code ~/.kube/config}) or, inside a pod, the service account
 * @param namespace where sandboxes live ({@code kubernetes.namespace}); empty: the kubeconfig's or
 *     the pod's own namespace, else {@code default}
 * @param agentMode {@code init-container} (default: an init container copies the runtime bundle
 *     from {@code agentImage} into a shared volume) or {@code baked} (the sandbox image already has
 *     it at {@code /opt/paddock})
 * @param agentImage the Paddock agent image holding the bundle at {@code /opt/paddock} ({@code
 *     kubernetes.agent-image})
 * @param images the specs' images, the first is the default ({@code kubernetes.image}, {@code
 *     kubernetes.images})
 * @param pullPolicy {@code IfNotPresent} (default), {@code Always} or {@code Never}
 * @param nodeSelector {@code kubernetes.node-selector}: {@code key=value,...}
 * @param tolerations {@code kubernetes.tolerations}: {@code key[=value]:Effect,...}
 * @param runtimeClass {@code kubernetes.runtime-class} (e.g. {@code gvisor}, {@code kata-qemu})
 * @param storageClass the workspace claims' class ({@code kubernetes.storage-class}); empty: the
 *     cluster's default
 * @param workspaceBytes each workspace claim's size unless the spec asks for a disk ({@code
 *     kubernetes.workspace-size}, default 10 GiB)
 * @param resources default requests and limits ({@code kubernetes.memory} 2 GiB, {@code
 *     kubernetes.cpus})
 * @param uid the user the pod runs as ({@code kubernetes.run-as}, default {@code 1000:1000}), also
 *     its {@code fsGroup}
 * @param gid its group
 * @param agentPort the agent's container port ({@code kubernetes.agent-port}, default 8000)
 * @param readyTimeout start and resume wait ({@code kubernetes.ready-timeout}, default 120 s)
 * @param stopGrace the pod's termination grace on pause and delete ({@code kubernetes.stop-grace})
 * @param instance the label {@code paddock.instance} ({@code kubernetes.instance}, default a digest
 *     of the data directory); replicas of one control plane must share it
 * @param controlPlaneLabels the labels of the control plane's pods, the only ones the sandboxes'
 *     NetworkPolicy admits ({@code kubernetes.control-plane-labels})
 * @param egress {@code all} (default), {@code dns} (DNS only) or {@code none}
 * @param specEnv every spec's environment ({@code kubernetes.spec.env.<NAME>})
 */
record KubernetesSettings(
    Optional<String> apiUrl,
    Optional<String> namespace,
    String agentMode,
    String agentImage,
    List<String> images,
    String pullPolicy,
    Map<String, String> nodeSelector,
    List<Toleration> tolerations,
    Optional<String> runtimeClass,
    Optional<String> storageClass,
    long workspaceBytes,
    Resources resources,
    long uid,
    long gid,
    int agentPort,
    Duration readyTimeout,
    Duration stopGrace,
    String instance,
    Map<String, String> controlPlaneLabels,
    String egress,
    Map<String, String> specEnv) {

  static final String DEFAULT_IMAGE = "paddock/sandbox:bookworm";
  static final String DEFAULT_AGENT_IMAGE = "paddock/agent:latest";
  static final String INIT_CONTAINER = "init-container";
  static final String BAKED = "baked";

  private static final Pattern UID_GID = Pattern.compile("(\\d+):(\\d+)");
  private static final Pattern TOLERATION =
      Pattern.compile("([^=:,\\s]+)(?:=([^:,\\s]*))?:(NoSchedule|PreferNoSchedule|NoExecute)");
  private static final Pattern LABEL_PAIR = Pattern.compile("([^=,\\s]+)=([^=,\\s]*)");

  /**
   * A toleration: {@code key=value:Effect} (operator {@code Equal}) or {@code key:Effect} ({@code
   * Exists}).
   */
  record Toleration(String key, Optional<String> value, String effect) {}

  static final Setting<String> API_URL =
      k8s(Setting.string("kubernetes.api-url", "the API server's URL"))
          .withDefaultText("the kubeconfig, or the pod's service account");
  static final Setting<String> NAMESPACE =
      k8s(Setting.string("kubernetes.namespace", "the namespace sandboxes live in"))
          .withDefaultText("the kubeconfig's or the pod's namespace, else default");
  static final Setting<String> AGENT =
      k8s(Setting.oneOf(
              "kubernetes.agent",
              "init-container: copy the agent from kubernetes.agent-image; baked: the image has"
                  + " it at /opt/paddock",
              INIT_CONTAINER,
              BAKED))
          .withDefault(INIT_CONTAINER);
  static final Setting<String> AGENT_IMAGE =
      k8s(Setting.string(
              "kubernetes.agent-image", "the Paddock agent image (runtime bundle at /opt/paddock)"))
          .withDefault(DEFAULT_AGENT_IMAGE);
  static final Setting<String> IMAGE =
      k8s(Setting.string("kubernetes.image", "the default spec's image (its id)"))
          .withDefault(DEFAULT_IMAGE);
  static final Setting<List<String>> IMAGES =
      k8s(Setting.list("kubernetes.images", "more images offered as specs"));
  static final Setting<String> PULL_POLICY =
      k8s(Setting.oneOf(
              "kubernetes.image-pull-policy",
              "the sandbox containers' imagePullPolicy",
              "IfNotPresent",
              "Always",
              "Never"))
          .withDefault("IfNotPresent");
  static final Setting<Map<String, String>> NODE_SELECTOR =
      k8s(Setting.of(
              "kubernetes.node-selector",
              "the sandbox pods' nodeSelector",
              "key=value pairs separated by commas",
              KubernetesSettings::labels))
          .withDefault(Map.of());
  static final Setting<List<Toleration>> TOLERATIONS =
      k8s(Setting.of(
              "kubernetes.tolerations",
              "the sandbox pods' tolerations",
              "key=value:Effect or key:Effect (NoSchedule, PreferNoSchedule, NoExecute),"
                  + " separated by commas",
              KubernetesSettings::tolerations))
          .withDefault(List.of());
  static final Setting<String> RUNTIME_CLASS =
      k8s(Setting.string(
                  "kubernetes.runtime-class",
                  "the sandbox pods' runtimeClassName (gvisor, kata-qemu...)")
              .requiring(
                  v -> v.matches("[a-z0-9]([-a-z0-9.]*[a-z0-9])?"),
                  "the name of a RuntimeClass, e.g. gvisor"))
          .withDefaultText("the cluster's default runtime");
  static final Setting<String> STORAGE_CLASS =
      k8s(Setting.string("kubernetes.storage-class", "the workspace claims' storageClassName"))
          .withDefaultText("the cluster's default class");
  static final Setting<Long> WORKSPACE_SIZE =
      k8s(Setting.size(
              "kubernetes.workspace-size",
              "each workspace claim's size, unless the spec asks for a disk"))
          .withDefault(10L << 30);
  static final Setting<Long> MEMORY =
      k8s(Setting.size("kubernetes.memory", "default memory request and limit; 0: none"))
          .withDefault(2L << 30);
  static final Setting<Double> CPUS =
      k8s(Setting.decimal("kubernetes.cpus", "default CPU request and limit, in cores", 0));
  static final Setting<String> RUN_AS =
      k8s(Setting.string("kubernetes.run-as", "uid:gid the pod runs as (and its fsGroup)")
              .requiring(
                  v -> UID_GID.matcher(v).matches() && !v.startsWith("0:"),
                  "uid:gid of an unprivileged user, e.g. 1000:1000"))
          .withDefault("1000:1000");
  static final Setting<Integer> AGENT_PORT =
      k8s(Setting.integer("kubernetes.agent-port", "the agent's container port", 1, 65535))
          .withDefault(8000);
  static final Setting<Duration> READY_TIMEOUT =
      k8s(Setting.duration("kubernetes.ready-timeout", "how long start and resume wait"))
          .withDefault(Duration.ofSeconds(120));
  static final Setting<Duration> STOP_GRACE =
      k8s(Setting.duration("kubernetes.stop-grace", "the pods' termination grace period"))
          .withDefault(Duration.ofSeconds(5));
  static final Setting<String> INSTANCE =
      k8s(Setting.string(
              "kubernetes.instance",
              "which control plane's sandboxes these are (label paddock.instance; replicas share"
                  + " it)"))
          .withDefaultText("a digest of the data directory");
  static final Setting<Map<String, String>> CONTROL_PLANE_LABELS =
      k8s(Setting.of(
              "kubernetes.control-plane-labels",
              "the control plane pods' labels: the only pods the sandboxes' NetworkPolicy admits",
              "key=value pairs separated by commas",
              KubernetesSettings::labels))
          .withDefault(Map.of("app.kubernetes.io/name", "paddock"));
  static final Setting<String> EGRESS =
      k8s(Setting.oneOf(
              "kubernetes.egress",
              "what sandboxes may reach: all, dns (name lookups only) or none",
              "all",
              "dns",
              "none"))
          .withDefault("all");
  static final Setting<Map<String, String>> SPEC_ENV =
      Setting.family(
          "kubernetes.spec.env.", "every spec's environment: kubernetes.spec.env.<NAME>");

  /** Every setting this backend reads. */
  static final List<Setting<?>> DECLARED =
      List.of(
          API_URL,
          NAMESPACE,
          AGENT,
          AGENT_IMAGE,
          IMAGE,
          IMAGES,
          PULL_POLICY,
          NODE_SELECTOR,
          TOLERATIONS,
          RUNTIME_CLASS,
          STORAGE_CLASS,
          WORKSPACE_SIZE,
          MEMORY,
          CPUS,
          RUN_AS,
          AGENT_PORT,
          READY_TIMEOUT,
          STOP_GRACE,
          INSTANCE,
          CONTROL_PLANE_LABELS,
          EGRESS,
          SPEC_ENV);

  KubernetesSettings {
    images = List.copyOf(images);
    nodeSelector = Map.copyOf(nodeSelector);
    tolerations = List.copyOf(tolerations);
    controlPlaneLabels = Map.copyOf(controlPlaneLabels);
    specEnv = Map.copyOf(specEnv);
  }

  boolean baked() {
    return agentMode.equals(BAKED);
  }

  /**
   * Reads the backend's settings.
   *
   * @throws dev.paddock.api.settings.SettingsException naming every invalid setting
   */
  static KubernetesSettings from(Map<String, String> values) {
    List<Setting<?>> declared = new ArrayList<>(DECLARED);
    declared.addAll(CommonSettings.ALL);
    Settings s = Settings.of(declared, values);
    List<String> images = new ArrayList<>();
    images.add(s.get(IMAGE));
    s.find(IMAGES).orElse(List.of()).stream()
        .filter(image -> !images.contains(image))
        .forEach(images::add);
    Matcher runAs = UID_GID.matcher(s.get(RUN_AS));
    if (!runAs.matches()) {
      throw new AssertionError("checked by the setting");
    }
    return new KubernetesSettings(
        s.find(API_URL),
        s.find(NAMESPACE),
        s.get(AGENT),
        s.get(AGENT_IMAGE),
        images,
        s.get(PULL_POLICY),
        s.get(NODE_SELECTOR),
        s.get(TOLERATIONS),
        s.find(RUNTIME_CLASS),
        s.find(STORAGE_CLASS),
        s.get(WORKSPACE_SIZE),
        new Resources(
            s.find(CPUS).map(OptionalDouble::of).orElse(OptionalDouble.empty()),
            s.get(MEMORY) > 0 ? OptionalLong.of(s.get(MEMORY)) : OptionalLong.empty(),
            OptionalInt.empty(),
            OptionalLong.empty()),
        Long.parseLong(runAs.group(1)),
        Long.parseLong(runAs.group(2)),
        s.get(AGENT_PORT),
        s.get(READY_TIMEOUT),
        s.get(STOP_GRACE),
        s.find(INSTANCE).orElseGet(() -> instanceOf(CommonSettings.dataDir(s).toString())),
        s.get(CONTROL_PLANE_LABELS),
        s.get(EGRESS),
        s.get(SPEC_ENV));
  }

  static String instanceOf(String dataDir) {
    return KeyDigest.sha256Hex(dataDir).substring(0, 12);
  }

  private static <T> Setting<T> k8s(Setting<T> setting) {
    String suffix = setting.name().substring("kubernetes.".length());
    return setting.withAliases(
        "PADDOCK_KUBERNETES_" + suffix.toUpperCase(Locale.ROOT).replace('-', '_'));
  }

  private static Map<String, String> labels(String text) {
    Map<String, String> labels = new LinkedHashMap<>();
    for (String pair : text.split(",")) {
      if (pair.isBlank()) {
        continue;
      }
      Matcher m = LABEL_PAIR.matcher(pair.strip());
      if (!m.matches()) {
        throw new IllegalArgumentException("'" + pair.strip() + "' is not key=value");
      }
      labels.put(m.group(1), m.group(2));
    }
    return labels;
  }

  private static List<Toleration> tolerations(String text) {
    List<Toleration> tolerations = new ArrayList<>();
    for (String item : text.split(",")) {
      if (item.isBlank()) {
        continue;
      }
      Matcher m = TOLERATION.matcher(item.strip());
      if (!m.matches()) {
        throw new IllegalArgumentException("'" + item.strip() + "' is not key[=value]:Effect");
      }
      tolerations.add(new Toleration(m.group(1), Optional.ofNullable(m.group(2)), m.group(3)));
    }
    return tolerations;
  }
}
