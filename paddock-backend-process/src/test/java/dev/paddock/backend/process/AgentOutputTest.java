package dev.paddock.backend.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AgentOutputTest {
  @TempDir Path dir;

  @Test
  void readsThePortKeepsTheTailAndCapsTheLog() throws Exception {
    StringBuilder text =
        new StringBuilder(
            "starting\npaddock agent-server listening on http://127.0.0.1:4321 (x)\n");
    for (int i = 0; i < 100; i++) {
      text.append("line ").append(i).append('\n');
    }
    Path log = dir.resolve("agent.log");

    AgentOutput output =
        AgentOutput.start(
            "t",
            new ByteArrayInputStream(text.toString().getBytes(StandardCharsets.UTF_8)),
            log,
            200);

    assertThat(output.ready().get()).isEqualTo(OptionalInt.of(4321));
    assertThat(output.awaitEnd(Duration.ofSeconds(10))).isTrue();
    assertThat(output.tail()).hasSize(20).endsWith("line 99");
    assertThat(Files.readString(log))
        .startsWith("starting\n")
        .endsWith("[paddock: agent.log truncated here]\n");
    assertThat(Files.size(log)).isLessThan(200 + 64);
  }

  @Test
  void outputEndingWithoutReadyLineCompletesEmpty() throws Exception {
    AgentOutput output =
        AgentOutput.start(
            "t",
            new ByteArrayInputStream("Error: no main class".getBytes(StandardCharsets.UTF_8)),
            dir.resolve("agent.log"),
            1024);

    assertThat(output.ready().get()).isEmpty();
    assertThat(output.awaitEnd(Duration.ofSeconds(10))).isTrue();
    assertThat(output.tail()).containsExactly("Error: no main class");
  }
}
