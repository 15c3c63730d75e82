package dev.paddock.deploy;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EnvVarSource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Every object of the YAML files under {@code deploy/kubernetes/} of the checkout, parsed by
 * fabric8 the way {@code kubectl apply -f} reads them (several documents per file), with the
 * look-ups the tests share: the control plane's Deployment and container, and the environment it
 * gets with {@code secretKeyRef}/{@code configMapKeyRef}/{@code envFrom} resolved against the
 * manifests' own ConfigMaps and Secrets.
 */
record Manifests(Map<Path, List<HasMetadata>> byFile) {
  static final Path CHECKOUT = Path.of("..").toAbsolutePath().normalize();
  static final Path DIRECTORY = CHECKOUT.resolve("deploy/kubernetes");
  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

  static Manifests load() {
    Map<Path, List<HasMetadata>> byFile = new LinkedHashMap<>();
    try (Stream<Path> files = Files.list(DIRECTORY)) {
      for (Path file : files.filter(f -> f.toString().endsWith(".yaml")).sorted().toList()) {
        byFile.put(file, parse(file));
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return new Manifests(byFile);
  }

  private static List<HasMetadata> parse(Path file) throws IOException {
    List<HasMetadata> objects = new ArrayList<>();
    String text = Files.readString(file, StandardCharsets.UTF_8);
    for (String document : text.split("(?m)^---\\s*$")) {
      if (document.lines().anyMatch(line -> !line.isBlank() && !line.startsWith("#"))) {
        try (InputStream in =
            new java.io.ByteArrayInputStream(document.getBytes(StandardCharsets.UTF_8))) {
          objects.add(SERIALIZATION.<HasMetadata>unmarshal(in));
        }
      }
    }
    return objects;
  }

  List<HasMetadata> all() {
    return byFile.values().stream().flatMap(List::stream).toList();
  }

  <T extends HasMetadata> List<T> ofKind(Class<T> type) {
    return all().stream().filter(type::isInstance).map(type::cast).toList();
  }

  <T extends HasMetadata> T named(Class<T> type, String name) {
    return ofKind(type).stream()
        .filter(o -> o.getMetadata().getName().equals(name))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no " + type.getSimpleName() + " " + name));
  }

  Deployment controlPlane() {
    return named(Deployment.class, "paddock-control-plane");
  }

  Container controlPlaneContainer() {
    return controlPlane().getSpec().getTemplate().getSpec().getContainers().get(0);
  }

  /** The probes of the control plane's container (startup, liveness, readiness). */
  List<Probe> probes() {
    Container c = controlPlaneContainer();
    return Stream.of(c.getStartupProbe(), c.getLivenessProbe(), c.getReadinessProbe())
        .filter(p -> p != null)
        .toList();
  }

  /**
   * The control plane container's environment as the kubelet would set it: {@code envFrom} first,
   * then {@code env} (which wins), references resolved.
   *
   * @throws AssertionError naming a reference to a ConfigMap, Secret or key the manifests lack
   */
  Map<String, String> controlPlaneEnvironment() {
    Map<String, String> env = new LinkedHashMap<>();
    Container c = controlPlaneContainer();
    c.getEnvFrom()
        .forEach(
            from -> {
              if (from.getConfigMapRef() != null) {
                env.putAll(named(ConfigMap.class, from.getConfigMapRef().getName()).getData());
              }
              if (from.getSecretRef() != null) {
                env.putAll(secretData(named(Secret.class, from.getSecretRef().getName())));
              }
            });
    for (EnvVar var : c.getEnv()) {
      env.put(var.getName(), value(var));
    }
    return env;
  }

  private String value(EnvVar var) {
    EnvVarSource from = var.getValueFrom();
    if (from == null) {
      return Optional.ofNullable(var.getValue()).orElse("");
    }
    if (from.getSecretKeyRef() != null) {
      var ref = from.getSecretKeyRef();
      return key(secretData(named(Secret.class, ref.getName())), ref.getKey(), var);
    }
    if (from.getConfigMapKeyRef() != null) {
      var ref = from.getConfigMapKeyRef();
      return key(named(ConfigMap.class, ref.getName()).getData(), ref.getKey(), var);
    }
    throw new AssertionError(var.getName() + " takes its value from a source the tests cannot see");
  }

  private static String key(Map<String, String> data, String key, EnvVar var) {
    String value = data.get(key);
    if (value == null) {
      throw new AssertionError(var.getName() + " refers to a missing key " + key);
    }
    return value;
  }

  private static Map<String, String> secretData(Secret secret) {
    Map<String, String> data = new LinkedHashMap<>();
    if (secret.getData() != null) {
      secret
          .getData()
          .forEach(
              (k, v) ->
                  data.put(k, new String(Base64.getDecoder().decode(v), StandardCharsets.UTF_8)));
    }
    if (secret.getStringData() != null) {
      data.putAll(secret.getStringData());
    }
    return data;
  }
}
