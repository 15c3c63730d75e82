package dev.paddock.backend.docker;

import dev.paddock.api.spi.SandboxBackend;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The shared service contract with the backend in bridge mode ({@code docker.network=bridge}, the
 * default outside tests): every request it sends is bridge-shaped, and goes through {@link
 * BridgeShapeEngine}, which checks each create is exactly what a bridge engine would get and
 * translates only the networking our machines forbid (traffic to the bridge's private addresses)
 * into host networking on a loopback port. The engine, the containers, their agents and every other
 * field are real. Fails when a create was not bridge-shaped, when the proxy saw a request it did
 * not know, when nothing went through it, or when a container or volume leaked. {@code
 * PADDOCK_TEST_DOCKER_BRIDGE=true} still runs {@code BridgeModeTest}'s untranslated start.
 */
class DockerBridgeShapeContractTest extends DockerContractTest {
  private static BridgeShapeEngine proxy;

  @BeforeAll
  static void bridgeShapeEngine() {
    proxy = BridgeShapeEngine.start(DockerTestEngine.dockerHost(), bridgePorts());
  }

  @AfterAll
  static void everyCreateWasBridgeShaped() {
    if (proxy != null) {
      proxy.close();
      proxy.assertTranslatedSome();
    }
  }

  /** The agent's port, then the workers' as the tests' settings configure them. */
  static List<Integer> bridgePorts() {
    List<Integer> ports = new ArrayList<>(List.of(DockerSettings.AGENT_PORT));
    ports.addAll(
        DockerSettings.from(DockerTestEngine.settings(Map.of("docker.network", "bridge")))
            .workerPorts());
    return ports;
  }

  @Override
  protected SandboxBackend newBackend() {
    return new BridgeCheckedBackend(DockerTestEngine.backend(proxy.settings()), proxy);
  }

  @Override
  protected void assertNothingLeaked() {
    try {
      super.assertNothingLeaked();
    } finally {
      proxy.assertBridgeShapedAndUnderstood();
    }
  }
}
