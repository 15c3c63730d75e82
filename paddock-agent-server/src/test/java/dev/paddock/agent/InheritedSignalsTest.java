package dev.paddock.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An agent started with SIGINT and SIGHUP ignored (as {@code cmd &} in a script and {@code nohup}
 * leave them) keeps ignoring them itself, while its commands get the default actions back: else no
 * interrupt would reach a command and a closed terminal's programs would live on. The agent is its
 * own process, started by a shell that ignores both first.
 */
class InheritedSignalsTest {
  private static final long HUP = 1L;
  private static final long INT = 1L << 1;

  @TempDir Path dir;

  @Test
  void commandsGetTheDefaultsBackAndTheAgentStillIgnoresBoth() throws Exception {
    try (AgentProcess agent =
        AgentProcess.start(
            List.of("bash", "-c", "trap '' INT HUP; exec \"$@\"", "ignoring"), dir, List.of())) {
      HttpResponse<String> ran =
          agent.post(
              "/api/bash/execute_bash_command",
              "{\"command\": \"grep -E '^Sig(Ign|Cgt):' /proc/self/status\"}");
      assertThat(ran.statusCode()).as(ran.body()).isEqualTo(200);
      String stdout =
          (String) dev.paddock.http.Json.parseObject(ran.body().getBytes()).get("stdout");
      long commandIgnores = mask(stdout, "SigIgn");
      assertThat(commandIgnores & (HUP | INT)).as("a command's ignored signals").isZero();

      assertThat(AgentProcess.statusMask(agent.pid(), "SigCgt") & (HUP | INT))
          .as("the agent catches both (to do nothing)")
          .isEqualTo(HUP | INT);
      assertThat(new ProcessBuilder("kill", "-INT", Long.toString(agent.pid())).start().waitFor())
          .isZero();
      assertThat(new ProcessBuilder("kill", "-HUP", Long.toString(agent.pid())).start().waitFor())
          .isZero();
      assertThat(agent.get("/alive").statusCode())
          .as("the agent after SIGINT and SIGHUP")
          .isEqualTo(200);
      assertThat(agent.isAlive()).isTrue();
    }
  }

  @Test
  void theIgnoredMaskIsReadFromTheStatusFile() throws Exception {
    Path status = Files.writeString(dir.resolve("status"), "Name:\tx\nSigIgn:\t0000000000000006\n");
    assertThat(InheritedSignals.ignored(status)).containsExactly(2);
    Files.writeString(status, "SigIgn:\t0000000000000003\n");
    assertThat(InheritedSignals.ignored(status)).containsExactly(1, 2);
    assertThat(InheritedSignals.ignored(dir.resolve("missing"))).isEmpty();
  }

  private static long mask(String status, String field) {
    for (String line : status.lines().toList()) {
      if (line.startsWith(field + ":")) {
        return Long.parseUnsignedLong(line.substring(field.length() + 1).strip(), 16);
      }
    }
    throw new AssertionError("no " + field + " in " + status);
  }
}
