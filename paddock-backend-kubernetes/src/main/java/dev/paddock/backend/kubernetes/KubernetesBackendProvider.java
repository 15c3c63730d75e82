package dev.paddock.backend.kubernetes;

import dev.paddock.api.SandboxSpecService;
import dev.paddock.api.settings.Setting;
import dev.paddock.api.spi.HostCheck;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.api.spi.SandboxBackendProvider;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The {@code kubernetes} backend ({@code RUNTIME=kubernetes} or {@code k8s}): a pod per sandbox in
 * one namespace, through the API server the kubeconfig names (or, inside a pod, its service
 * account; or {@code kubernetes.api-url}). See {@link KubernetesSettings} for its settings and
 * {@code docs/KUBERNETES.md} for the pod it makes and the RBAC it needs.
 */
public final class KubernetesBackendProvider implements SandboxBackendProvider {
  /** For {@link java.util.ServiceLoader}. */
  public KubernetesBackendProvider() {}

  @Override
  public List<String> names() {
    return List.of("kubernetes", "k8s");
  }

  @Override
  public List<Setting<?>> settings() {
    return KubernetesSettings.DECLARED;
  }

  /** Connects lazily: the API server is first called by the first start, list or inspect. */
  @Override
  public SandboxBackend create(Map<String, String> settings) {
    KubernetesSettings kubernetes = KubernetesSettings.from(settings);
    return new KubernetesBackend(kubernetes, client(kubernetes));
  }

  static KubernetesClient client(KubernetesSettings settings) {
    ConfigBuilder config = new ConfigBuilder(Config.autoConfigure(null));
    settings
        .apiUrl()
        .ifPresent(
            url ->
                // A plain-http API server (a local proxy such as kubectl proxy, a test server)
                // speaks HTTP/1.1: no h2c upgrade attempt.
                config.withMasterUrl(url).withHttp2Disable(url.startsWith("http://")));
    settings.namespace().ifPresent(config::withNamespace);
    return new KubernetesClientBuilder().withConfig(config.build()).build();
  }

  /** The API server answering, and this identity allowed to list pods in the namespace. */
  @Override
  public List<HostCheck> hostChecks(Map<String, String> settings) {
    List<HostCheck> checks = new ArrayList<>();
    KubernetesSettings kubernetes;
    try {
      kubernetes = KubernetesSettings.from(settings);
    } catch (RuntimeException e) {
      return List.of(HostCheck.fail("kubernetes settings", e.getMessage(), "fix the setting"));
    }
    try (KubernetesClient client = client(kubernetes)) {
      String version = client.getKubernetesVersion().getGitVersion();
      checks.add(HostCheck.ok("kubernetes api", client.getMasterUrl() + " answers, " + version));
      String namespace = kubernetes.namespace().orElse(client.getNamespace());
      client.pods().inNamespace(namespace).list();
      checks.add(HostCheck.ok("kubernetes namespace", "pods in " + namespace + " can be listed"));
    } catch (RuntimeException e) {
      // Never throws (the doctor's contract): an unreadable kubeconfig is a failed check too.
      String code = e instanceof KubernetesClientException api ? api.getCode() + " " : "";
      checks.add(
          HostCheck.fail(
              "kubernetes api",
              code + e.getMessage(),
              "check KUBECONFIG or kubernetes.api-url, and the RBAC of docs/KUBERNETES.md"));
    }
    return checks;
  }

  @Override
  public SandboxSpecService specs(Map<String, String> settings) {
    return KubernetesSpecService.of(KubernetesSettings.from(settings));
  }
}
