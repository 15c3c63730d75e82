package dev.paddock.backend.docker;

import dev.paddock.api.Resources;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.spi.SpecList;

/**
 * The Docker backend's specs: one per configured image ({@code docker.image} first, the default,
 * then {@code docker.images}), its id the image reference, working directory {@code
 * /workspace/project} (OpenHands'), environment from {@code docker.spec.env.<NAME>}, limits from
 * the backend's defaults, default lifetimes from {@code docker.spec.timeout} and {@code
 * docker.spec.idle-timeout}.
 */
final class DockerSpecService {
  /** OpenHands' workspace directory, where its agents expect the project. */
  static final String WORKING_DIR = "/workspace/project";

  private DockerSpecService() {}

  static SpecList of(DockerSettings settings) {
    Resources resources = settings.resources();
    return SpecList.of(
        settings.images().stream().map(image -> spec(settings, image, resources)).toList());
  }

  private static SandboxSpec spec(DockerSettings settings, String image, Resources resources) {
    SandboxSpec.Builder spec =
        SandboxSpec.builder(image)
            .env(settings.specEnv())
            .workingDir(WORKING_DIR)
            .resources(resources);
    settings.specTimeout().ifPresent(spec::timeout);
    settings.specIdleTimeout().ifPresent(spec::idleTimeout);
    return spec.build();
  }
}
