package dev.paddock.backend.docker;

import dev.paddock.api.Resources;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.spi.SpecList;

/**
 * The Docker backend's specs: one per configured image ({@code docker.image} first, the default,
 * then {@code docker.images}), its id the image reference, working directory {@code /workspace},
 * environment from {@code docker.spec.env.<NAME>}, limits from the backend's defaults.
 */
final class DockerSpecService {
  private DockerSpecService() {}

  static SpecList of(DockerSettings settings) {
    Resources resources = settings.resources();
    return SpecList.of(
        settings.images().stream()
            .map(
                image ->
                    SandboxSpec.builder(image)
                        .env(settings.specEnv())
                        .workingDir("/workspace")
                        .resources(resources)
                        .build())
            .toList());
  }
}
