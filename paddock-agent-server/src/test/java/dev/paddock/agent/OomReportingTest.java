package dev.paddock.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A command the OOM killer ended says so ({@code oom_killed}, the error, a stderr line). The
 * agent's cgroup counter is replaced by a file the commands themselves bump before dying of
 * SIGKILL, which is what the kernel does on a real OOM kill (the real one is tested with Docker).
 */
class OomReportingTest {
  private final Path counterDir = temporaryDirectory();
  private final Path counter = counterDir.resolve("memory.events");

  @RegisterExtension final AgentFixture agent = new AgentFixture(b -> b.oomCounterFile(counter));

  private final BashClient bash = new BashClient(agent);

  @AfterEach
  void removeCounter() throws IOException {
    try (var paths = Files.walk(counterDir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }

  /** A script that sets the counter and then SIGKILLs its own shell ($$ is its own pid). */
  private String bumpThenDie(long count) {
    return "printf 'low 0\\noom 1\\noom_kill " + count + "\\n' > " + counter + "; kill -9 $$";
  }

  @Test
  void aCommandKilledWhileTheCounterRoseIsReportedAsOutOfMemory() throws Exception {
    Files.writeString(counter, "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\n");

    Map<String, Object> result = bash.execute("command", bumpThenDie(1));

    assertThat(result)
        .containsEntry("exit_code", 137)
        .containsEntry("oom_killed", true)
        .containsEntry("error", "killed: out of memory (the sandbox's memory limit)");
    assertThat((String) result.get("stderr"))
        .contains("killed: out of memory (the sandbox's memory limit)");
  }

  @Test
  void theCommandStatusAndEventsCarryTheFlagToo() throws Exception {
    Files.writeString(counter, "oom_kill 3\n");

    String id = bash.start("command", bumpThenDie(4));
    BashClient.Polled polled = bash.await(id, java.time.Duration.ofSeconds(30));

    assertThat(polled.last()).containsEntry("exit_code", 137).containsEntry("oom_killed", true);
    assertThat(AgentFixture.json(agent.get("/api/bash/commands/" + id)))
        .containsEntry("oom_killed", true);
  }

  @Test
  void aSessionCommandKilledForMemoryIsReported() throws Exception {
    Files.writeString(counter, "oom_kill 0\n");

    Map<String, Object> result =
        bash.execute(
            "command",
            "printf 'oom_kill 1\\n' > " + counter + "; sh -c 'kill -9 $$'",
            "session",
            "s");

    assertThat(result).containsEntry("exit_code", 137).containsEntry("oom_killed", true);
  }

  @Test
  void aSigkillWithoutAnOomKillIsNotReported() throws Exception {
    Files.writeString(counter, "oom_kill 2\n");

    Map<String, Object> result = bash.execute("command", "kill -9 $$");

    assertThat(result).containsEntry("exit_code", 137).containsEntry("oom_killed", false);
    assertThat(result).doesNotContainKey("error");
  }

  @Test
  void anOomKillElsewhereDoesNotMarkACommandThatExitedNormally() throws Exception {
    Files.writeString(counter, "oom_kill 0\n");

    Map<String, Object> result =
        bash.execute("command", "printf 'oom_kill 1\\n' > " + counter + "; exit 3");

    assertThat(result).containsEntry("exit_code", 3).containsEntry("oom_killed", false);
  }

  @Test
  void noReadableCounterMeansNoReport() throws Exception {
    // No file at all: the counter reads empty before the command, so nothing is guessed.
    Map<String, Object> result = bash.execute("command", bumpThenDie(1));

    assertThat(result).containsEntry("exit_code", 137).containsEntry("oom_killed", false);
  }

  @Test
  void commandShellsAreTheOomKillersFirstChoiceAndTheAgentIsNot() throws Exception {
    String own = Files.readString(Path.of("/proc/self/oom_score_adj")).strip();

    assertThat(bash.execute("command", "cat /proc/self/oom_score_adj"))
        .containsEntry("stdout", "1000\n");
    assertThat(bash.execute("command", "cat /proc/self/oom_score_adj", "session", "s"))
        .containsEntry("stdout", "1000\n");
    assertThat(own).isNotEqualTo("1000");
  }

  /** The fork server off: cold commands raise their score as well. */
  @Nested
  class ColdCommands {
    @RegisterExtension final AgentFixture cold = new AgentFixture(b -> b.forkServer(false));

    @Test
    void areTheOomKillersFirstChoice() throws Exception {
      assertThat(new BashClient(cold).execute("command", "cat /proc/self/oom_score_adj"))
          .containsEntry("stdout", "1000\n");
    }
  }

  private static Path temporaryDirectory() {
    try {
      return Files.createTempDirectory("paddock-oom-counter-");
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
