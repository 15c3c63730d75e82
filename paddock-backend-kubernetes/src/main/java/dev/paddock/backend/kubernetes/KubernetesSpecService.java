package dev.paddock.backend.kubernetes;

import dev.paddock.api.SandboxSpec;
import dev.paddock.api.spi.SpecList;
import java.util.List;

/**
 * The Kubernetes backend's specs: one per configured image ({@code kubernetes.image} first, the
 * default, then {@code kubernetes.images}), its id the image reference, working directory {@code
 * /workspace/project} (OpenHands'), environment from {@code kubernetes.spec.env.<NAME>}, requests
 * and limits from the backend's defaults.
 */
final class KubernetesSpecService {
  static final String WORKING_DIR = "/workspace/project";

  private KubernetesSpecService() {}

  static SpecList of(KubernetesSettings settings) {
    List<SandboxSpec> specs =
        settings.images().stream()
            .map(
                image ->
                    SandboxSpec.builder(image)
                        .env(settings.specEnv())
                        .workingDir(WORKING_DIR)
                        .resources(settings.resources())
                        .build())
            .toList();
    return SpecList.of(specs);
  }
}
