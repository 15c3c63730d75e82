package dev.paddock.backend.docker;

import dev.paddock.api.SandboxSpecService;
import dev.paddock.api.settings.Setting;
import dev.paddock.api.spi.HostCheck;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.api.spi.SandboxBackendProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The {@code docker} backend: one container per sandbox on a Docker Engine reached through {@code
 * DOCKER_HOST} (the local unix socket by default). See {@link DockerSettings} for its settings and
 * {@code docs/DOCKER.md} for the image contract.
 */
public final class DockerBackendProvider implements SandboxBackendProvider {
  /** For {@link java.util.ServiceLoader}. */
  public DockerBackendProvider() {}

  @Override
  public List<String> names() {
    return List.of("docker");
  }

  @Override
  public List<Setting<?>> settings() {
    return DockerSettings.DECLARED;
  }

  /**
   * Builds (or finds) the agent runtime bundle; the engine is not contacted until the first call.
   *
   * @throws IllegalArgumentException on a malformed setting, or when the agent jar is missing
   */
  @Override
  public SandboxBackend create(Map<String, String> settings) {
    DockerSettings docker = DockerSettings.from(settings);
    Path bundle =
        docker
            .bundle()
            .orElseGet(
                () -> {
                  if (!Files.isRegularFile(docker.agentJar())) {
                    throw new IllegalArgumentException(
                        "docker backend: the agent-server jar "
                            + docker.agentJar()
                            + " is missing (build with ./paddock build, or set docker.agent-jar)");
                  }
                  return RuntimeBundle.ensure(
                      docker.dataDir().resolve("runtime"), docker.agentJar(), docker.jvmOptions());
                });
    return new DockerBackend(
        docker, DockerEngine.connect(docker.dockerHost(), Duration.ofSeconds(60)), bundle);
  }

  /** The socket, the engine, the default image and its architecture, disk, clock. */
  @Override
  public List<HostCheck> hostChecks(Map<String, String> settings) {
    return DockerHostChecks.run(settings);
  }

  @Override
  public SandboxSpecService specs(Map<String, String> settings) {
    return DockerSpecService.of(DockerSettings.from(settings));
  }
}
