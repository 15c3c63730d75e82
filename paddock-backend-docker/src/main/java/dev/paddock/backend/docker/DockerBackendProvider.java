package dev.paddock.backend.docker;

import dev.paddock.api.SandboxSpecService;
import dev.paddock.api.settings.Setting;
import dev.paddock.api.spi.HostCheck;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.api.spi.SandboxBackendProvider;
import dev.paddock.backend.kit.RuntimeBundle;
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
  private static final System.Logger LOG = System.getLogger("paddock.backend.docker");

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
   * Builds (or finds) the agent runtime bundle; the engine is contacted only to check {@code
   * docker.runtime} when it is set.
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
    DockerEngine engine = DockerEngine.connect(docker.dockerHost(), Duration.ofSeconds(60));
    docker.runtime().ifPresent(runtime -> requireRegistered(runtime, new EngineFeatures(engine)));
    return new DockerBackend(docker, engine, bundle);
  }

  /**
   * A runtime the engine does not know would fail every start with the engine's own words: say so
   * now, naming the setting. An engine that is down is checked by its first start instead.
   */
  static void requireRegistered(String runtime, EngineFeatures features) {
    List<String> registered;
    try {
      registered = features.runtimes();
    } catch (DockerEngine.EngineException e) {
      LOG.log(
          System.Logger.Level.WARNING,
          "docker backend: cannot check docker.runtime={0} now: {1}",
          runtime,
          e.getMessage());
      return;
    }
    if (!registered.contains(runtime)) {
      throw new IllegalArgumentException(
          "docker.runtime: the engine has no runtime named '"
              + runtime
              + "' (registered: "
              + String.join(", ", registered)
              + "); register it in /etc/docker/daemon.json under \"runtimes\" and reload dockerd,"
              + " or leave docker.runtime unset for the engine's default");
    }
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
