package dev.paddock.backend.docker;

import dev.paddock.api.spi.SandboxBackend;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The SPI-level contract with the backend in bridge mode, through {@link BridgeShapeEngine} as in
 * {@link DockerBridgeShapeContractTest}: bridge-shaped requests, checked, translated into host
 * networking on loopback only where our machines' rule forbids the bridge's private addresses; the
 * engine, containers and agents are real. Fails on a create that is not bridge-shaped, on a request
 * the proxy does not know, when nothing went through it, or on a leak.
 */
class DockerBridgeShapeBackendContractTest extends DockerBackendContractTest {
  private static BridgeShapeEngine proxy;

  @BeforeAll
  static void bridgeShapeEngine() {
    proxy =
        BridgeShapeEngine.start(
            DockerTestEngine.dockerHost(), DockerBridgeShapeContractTest.bridgePorts());
  }

  @AfterAll
  static void everyCreateWasBridgeShaped() {
    if (proxy != null) {
      proxy.close();
      proxy.assertTranslatedSome();
    }
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
