package dev.paddock.backend.docker;

import dev.paddock.api.Resources;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.spi.SpecList;
import java.util.ArrayList;
import java.util.List;

/**
 * The Docker backend's specs: one per configured image ({@code docker.image} first, the default,
 * then {@code docker.images}), its id the image reference, working directory {@code
 * /workspace/project} (OpenHands'), environment from {@code docker.spec.env.<NAME>}, limits from
 * the backend's defaults, default lifetimes from {@code docker.spec.timeout} and {@code
 * docker.spec.idle-timeout}. Then one per image of {@code docker.agent-server-images}, whose own
 * agent-server runs ({@link SandboxSpec.AgentServer#IMAGE}).
 */
final class DockerSpecService {
  /** OpenHands' workspace directory, where its agents expect the project. */
  static final String WORKING_DIR = "/workspace/project";

  private DockerSpecService() {}

  static SpecList of(DockerSettings settings) {
    Resources resources = settings.resources();
    List<SandboxSpec> specs = new ArrayList<>();
    for (String image : settings.images()) {
      specs.add(spec(settings, image, resources).build());
    }
    for (String image : settings.imageAgentImages()) {
      if (!settings.images().contains(image)) {
        specs.add(
            spec(settings, image, resources).agentServer(SandboxSpec.AgentServer.IMAGE).build());
      }
    }
    return SpecList.of(specs);
  }

  private static SandboxSpec.Builder spec(
      DockerSettings settings, String image, Resources resources) {
    SandboxSpec.Builder spec =
        SandboxSpec.builder(image)
            .env(settings.specEnv())
            .workingDir(WORKING_DIR)
            .resources(resources);
    settings.specTimeout().ifPresent(spec::timeout);
    settings.specIdleTimeout().ifPresent(spec::idleTimeout);
    return spec;
  }
}
