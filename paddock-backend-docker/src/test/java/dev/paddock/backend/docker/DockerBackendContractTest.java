package dev.paddock.backend.docker;

import dev.paddock.api.SandboxSpec;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.controlplane.SandboxBackendContract;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.BeforeAll;

/**
 * The SPI-level contract against a real Docker Engine: one container per sandbox, host networking
 * (every call goes to loopback). Skipped when no engine can be reached (failed instead on CI);
 * fails when a test leaves a Paddock container or volume behind.
 */
class DockerBackendContractTest extends SandboxBackendContract {
  private static DockerEngine engine;
  private static Set<String> before;

  @BeforeAll
  static void engine() {
    engine = DockerTestEngine.require();
    before = DockerTestEngine.managedContainers(engine);
  }

  @Override
  protected SandboxBackend newBackend() {
    return DockerTestEngine.backend(Map.of());
  }

  @Override
  protected SandboxSpec spec() {
    return SandboxSpec.builder(DockerTestEngine.IMAGE).workingDir("/workspace").build();
  }

  /** The agent refuses an unknown option and exits 2 before it is ready. */
  @Override
  protected SandboxSpec exitingSpec() {
    return spec().toBuilder().command(List.of("--no-such-option-secret-detail /srv/x")).build();
  }

  /** The labels as the engine holds them on the container. */
  @Override
  protected Optional<Map<String, String>> labelsOf(RuntimeHandle handle) {
    var inspected = engine.get("/containers/" + handle.attributes().get("container") + "/json");
    if (!inspected.ok()) {
      return Optional.of(Map.of());
    }
    Map<String, Object> config = ContainerState.map(inspected.json().get("Config"));
    Map<String, String> labels = new HashMap<>();
    ContainerState.map(config.get("Labels")).forEach((k, v) -> labels.put(k, String.valueOf(v)));
    return Optional.of(labels);
  }

  @Override
  protected void assertNothingLeaked() {
    DockerTestEngine.assertNoNewContainers(engine, before);
  }
}
