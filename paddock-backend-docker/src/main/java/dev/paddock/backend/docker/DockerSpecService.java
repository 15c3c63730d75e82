package dev.paddock.backend.docker;

import dev.paddock.api.Resources;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.spi.SpecList;
import java.util.ArrayList;
import java.util.List;

/**
 * The Docker backend's specs: one per configured image ({@code docker.image} first, the default,
 * then {@code docker.images}), its id the image reference, working directory {@code /workspace},
 * environment from {@code docker.spec.env.<NAME>}, limits from the backend's defaults. Then one per
 * image of {@code docker.agent-server-images}, whose own agent-server runs ({@link
 * SandboxSpec.AgentServer#IMAGE}) with OpenHands' working directory {@code /workspace/project}.
 */
final class DockerSpecService {
  private DockerSpecService() {}

  static SpecList of(DockerSettings settings) {
    Resources resources = settings.resources();
    List<SandboxSpec> specs = new ArrayList<>();
    for (String image : settings.images()) {
      specs.add(
          SandboxSpec.builder(image)
              .env(settings.specEnv())
              .workingDir("/workspace")
              .resources(resources)
              .build());
    }
    for (String image : settings.imageAgentImages()) {
      if (!settings.images().contains(image)) {
        specs.add(
            SandboxSpec.builder(image)
                .env(settings.specEnv())
                .workingDir("/workspace/project")
                .resources(resources)
                .agentServer(SandboxSpec.AgentServer.IMAGE)
                .build());
      }
    }
    return SpecList.of(specs);
  }
}
