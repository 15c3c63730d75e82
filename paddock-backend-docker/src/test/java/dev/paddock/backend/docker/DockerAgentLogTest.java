package dev.paddock.backend.docker;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.SandboxSpec;
import dev.paddock.api.spi.SandboxBackend;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The agent's output as the engine keeps it ({@code SandboxBackend.agentLog}): what the control
 * plane copies into the sandbox's kept log before it removes the container (issue 13, point 5).
 */
class DockerAgentLogTest {
  private DockerEngine engine;
  private Set<String> before;
  private SandboxBackend backend;
  private Sandboxes sandboxes;

  @BeforeEach
  void setUp() {
    engine = DockerTestEngine.require();
    before = DockerTestEngine.managedContainers(engine);
    backend = DockerTestEngine.backend(Map.of());
    sandboxes = new Sandboxes(backend);
  }

  @AfterEach
  void tearDown() {
    try {
      sandboxes.close();
    } finally {
      backend.close();
      DockerTestEngine.assertNoNewContainers(engine, before);
    }
  }

  @Test
  void theAgentsOutputIsReadFromTheContainersLogByOffsetUntilItIsRemoved() {
    var handle =
        sandboxes
            .start("sb-agent-log", SandboxSpec.builder(DockerTestEngine.IMAGE).build())
            .handle();

    byte[] all = backend.agentLog(handle, 0, 1 << 20).orElseThrow();
    String text = new String(all, StandardCharsets.UTF_8);

    assertThat(text).contains("agent-server listening on http://");
    assertThat(backend.agentLog(handle, 10, 1 << 20).orElseThrow())
        .as("from an offset: the rest")
        .isEqualTo(java.util.Arrays.copyOfRange(all, 10, all.length));
    assertThat(backend.agentLog(handle, 0, 5).orElseThrow()).hasSize(5);
    assertThat(backend.agentLog(handle, all.length + 100L, 1 << 20).orElseThrow())
        .as("past the end: nothing yet")
        .isEmpty();
    backend.destroy(handle);
    assertThat(backend.agentLog(handle, 0, 1 << 20)).as("gone with the container").isEmpty();
  }
}
