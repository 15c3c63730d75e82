package dev.paddock.backend.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.paddock.api.ExposedUrl;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.RuntimeState;
import dev.paddock.api.spi.SandboxBackend;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Bridge networking, the default outside tests: the container's agent and worker ports are
 * published on the bind address with host ports chosen by the engine as it binds (no
 * bind-then-close race), the host is reachable from inside as {@code host.docker.internal}, and
 * exposed URLs follow the URL pattern.
 *
 * <p>The request the engine gets is checked without starting anything. Starting a bridge sandbox
 * makes the engine's proxy forward loopback traffic to the bridge's private addresses, which our
 * machines forbid in tests, so that part is opt-in: {@code PADDOCK_TEST_DOCKER_BRIDGE=true}. The
 * shared contracts run in bridge mode in every run through a proxy that translates only that
 * networking ({@link DockerBridgeShapeContractTest}, {@link BridgeShapeEngine}).
 */
class BridgeModeTest {
  private static ContainerSpec bridgeSpec() {
    DockerSettings docker = DockerSettings.from(bridgeSettings(Map.of()));
    DockerEngine engine =
        DockerEngine.connect("unix:///nonexistent.sock", java.time.Duration.ofSeconds(1));
    return new ContainerSpec(docker, Path.of("/nonexistent/bundle"), new EngineFeatures(engine));
  }

  private static Map<String, String> bridgeSettings(Map<String, String> extra) {
    Map<String, String> settings =
        new java.util.HashMap<>(
            Map.of(
                "docker.network", "bridge",
                "docker.runtime-bundle", "/nonexistent/bundle",
                "docker.url-host", "sandboxes.example.com",
                "docker.url-pattern", "https://{host}:{port}/"));
    settings.putAll(extra);
    return settings;
  }

  @Test
  void portsArePublishedWithEngineChosenHostPortsOnTheBindAddress() {
    Map<String, Object> body =
        bridgeSpec()
            .body(
                Sandboxes.request(
                    "sb-bridge",
                    SandboxSpec.builder("img:1").build(),
                    Sandboxes.newKey(),
                    Sandboxes.newKey()),
                "img:1");
    Map<String, Object> host = ContainerState.map(body.get("HostConfig"));
    assertThat(host.get("NetworkMode")).isEqualTo("bridge");
    assertThat(ContainerState.map(body.get("ExposedPorts")))
        .containsOnlyKeys("8000/tcp", "12000/tcp", "12001/tcp");
    Map<String, Object> bindings = ContainerState.map(host.get("PortBindings"));
    assertThat(bindings.get("8000/tcp"))
        .isEqualTo(List.of(Map.of("HostIp", "127.0.0.1", "HostPort", "")));
    assertThat(host.get("ExtraHosts")).isEqualTo(List.of("host.docker.internal:host-gateway"));
    assertThat(String.valueOf(body.get("Cmd"))).contains("--host, 0.0.0.0, --port, 8000");
    assertThat(host.get("CapDrop")).isEqualTo(List.of("ALL"));
    assertThat(host.get("SecurityOpt")).isEqualTo(List.of("no-new-privileges"));
    assertThat(host.get("Init")).isEqualTo(true);
    assertThat(((Number) host.get("Memory")).longValue()).isEqualTo(2L << 30);
    assertThat(host).doesNotContainKey("Ulimits");
  }

  @Test
  void publishedPortsBecomeExposedUrlsThroughThePattern() {
    Map<String, Object> inspect =
        Map.of(
            "NetworkSettings",
            Map.of(
                "Ports",
                Map.of(
                    "8000/tcp", List.of(Map.of("HostIp", "127.0.0.1", "HostPort", "49153")),
                    "12000/tcp", List.of(Map.of("HostIp", "127.0.0.1", "HostPort", "49154")))));
    assertThat(ContainerState.parse(inspect).publishedPorts())
        .containsEntry(8000, 49153)
        .containsEntry(12000, 49154);
    DockerSettings settings =
        DockerSettings.from(
            Map.of(
                "docker.url-host",
                "sandboxes.example.com",
                "docker.url-pattern",
                "https://{host}:{port}/"));
    assertThat(settings.url(49153)).isEqualTo("https://sandboxes.example.com:49153/");
  }

  /** Opt-in: really starts a bridge sandbox (traffic crosses the engine's proxy to 172.17.x). */
  @Test
  void aBridgeSandboxAnswersOnItsPublishedPort() {
    assumeTrue(
        "true".equalsIgnoreCase(System.getenv("PADDOCK_TEST_DOCKER_BRIDGE")),
        "bridge networking reaches private addresses: opt in with PADDOCK_TEST_DOCKER_BRIDGE=true");
    DockerEngine engine = DockerTestEngine.require();
    Set<String> before = DockerTestEngine.managedContainers(engine);
    try (SandboxBackend backend = DockerTestEngine.backend(Map.of("docker.network", "bridge"));
        Sandboxes sandboxes = new Sandboxes(backend)) {
      var sandbox =
          sandboxes.start(
              "sb-bridge-live",
              SandboxSpec.builder(DockerTestEngine.IMAGE).workingDir("/workspace").build());
      RuntimeState state = backend.inspect(sandbox.handle());
      assertThat(state.status()).isEqualTo(SandboxStatus.RUNNING);
      assertThat(state.urls())
          .extracting(ExposedUrl::name)
          .contains("AGENT_SERVER", "WORKER_1", "WORKER_2");
      assertThat(Sandboxes.stdout(sandboxes.exec(sandbox, "getent hosts host.docker.internal", 10)))
          .isNotBlank();
    } finally {
      DockerTestEngine.assertNoNewContainers(engine, before);
    }
  }
}
