package dev.paddock.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Named persistent shells: state carries over, failures are contained. */
class ShellSessionTest {
  @RegisterExtension final AgentFixture agent = new AgentFixture();

  private final BashClient bash = new BashClient(agent);

  private Map<String, Object> inSession(String session, String command) throws Exception {
    return bash.execute("command", command, "session", session);
  }

  @Test
  void cwdVariablesAndFunctionsCarryOver() throws Exception {
    Path dir = agent.scratch();
    inSession("s", "cd " + dir + "; export GREETING=hi; shout() { echo \"$1!\"; }");
    assertThat(inSession("s", "pwd; echo $GREETING; shout hey"))
        .containsEntry("stdout", dir.toRealPath() + "\nhi\nhey!\n")
        .containsEntry("exit_code", 0);
  }

  @Test
  void eachCommandHasItsOwnExitCodeAndOutput() throws Exception {
    assertThat(inSession("s", "echo a; false")).containsEntry("exit_code", 1);
    assertThat(inSession("s", "echo b"))
        .containsEntry("exit_code", 0)
        .containsEntry("stdout", "b\n");
    assertThat(inSession("s", "echo err >&2; (exit 9)"))
        .containsEntry("exit_code", 9)
        .containsEntry("stderr", "err\n");
  }

  @Test
  void aRelativeCwdIsResolvedAgainstTheWorkspaceNotTheShellsCwd() throws Exception {
    Path sub = Files.createDirectories(agent.workspace().resolve("sub"));
    inSession("s", "cd /tmp");
    assertThat(bash.execute("command", "pwd", "session", "s", "cwd", "sub"))
        .containsEntry("exit_code", 0)
        .containsEntry("stdout", sub.toRealPath() + "\n");
  }

  @Test
  void aTimeoutKillsTheChildButKeepsTheSessionState() throws Exception {
    inSession("s", "export KEPT=1; cd /tmp");
    Map<String, Object> timedOut =
        bash.execute("command", "echo start; sleep 1000", "session", "s", "timeout", 1);
    assertThat(timedOut)
        .containsEntry("timed_out", true)
        .containsEntry("exit_code", -1)
        .containsEntry("stdout", "start\n")
        .doesNotContainKey("session_reset");
    assertThat(inSession("s", "echo $KEPT; pwd"))
        .containsEntry("stdout", "1\n/tmp\n")
        .containsEntry("exit_code", 0)
        .doesNotContainKey("session_reset");
  }

  @Test
  void aTimeoutKillsAChildThatIgnoresSigtermWithoutResettingTheSession() throws Exception {
    inSession("s", "export KEPT=1");
    Map<String, Object> timedOut =
        bash.execute(
            "command", "bash -c \"trap '' TERM; sleep 1000\"", "session", "s", "timeout", 1);
    assertThat(timedOut).containsEntry("timed_out", true).doesNotContainKey("session_reset");
    assertThat(inSession("s", "echo $KEPT")).containsEntry("stdout", "1\n");
  }

  @Test
  void stdinToASessionCommandIs409() throws Exception {
    String id = bash.start("command", "sleep 1000", "session", "s", "timeout", 10);
    Awaitility.await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () -> Boolean.TRUE.equals(AgentFixture.json(agent.get("/api/sessions/s")).get("busy")));
    HttpResponse<String> response =
        agent.send(
            agent
                .request("/api/bash/commands/" + id + "/stdin")
                .POST(java.net.http.HttpRequest.BodyPublishers.ofString("x"))
                .build());
    assertThat(response.statusCode()).isEqualTo(409);
    agent.delete("/api/sessions/s");
    bash.await(id, Duration.ofSeconds(5));
  }

  @Test
  void aBuiltinBusyLoopTimesOutAndResetsTheSession() throws Exception {
    inSession("s", "export LOST=1");
    Map<String, Object> loop =
        bash.execute("command", "while :; do :; done", "session", "s", "timeout", 1);
    assertThat(loop)
        .containsEntry("timed_out", true)
        .containsEntry("exit_code", -1)
        .containsEntry("session_reset", true);
    assertThat(inSession("s", "echo ${LOST:-unset}"))
        .containsEntry("stdout", "unset\n")
        .containsEntry("exit_code", 0)
        .as("the reset was reported once, by the command that caused it")
        .doesNotContainKey("session_reset");
  }

  @Test
  void exitReportsItsCodeAndTheNextCommandGetsAFreshShell() throws Exception {
    inSession("s", "export LOST=1");
    Map<String, Object> exited = inSession("s", "echo bye; exit 3");
    assertThat(exited)
        .containsEntry("exit_code", 3)
        .containsEntry("stdout", "bye\n")
        .containsEntry("session_reset", true);
    assertThat(inSession("s", "echo ${LOST:-unset}"))
        .containsEntry("stdout", "unset\n")
        .containsEntry("exit_code", 0)
        .doesNotContainKey("session_reset");
  }

  @Test
  void aShellKilledBetweenCommandsIsReportedByTheNextOne() throws Exception {
    long pid = Long.parseLong(((String) inSession("s", "echo $$").get("stdout")).trim());
    ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
    Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> BashClient.gone(pid));
    assertThat(inSession("s", "echo again"))
        .containsEntry("stdout", "again\n")
        .containsEntry("session_reset", true);
  }

  @Test
  void sessionsAreIsolatedFromEachOther() throws Exception {
    inSession("one", "export WHO=one; cd /tmp");
    inSession("two", "export WHO=two");
    assertThat(inSession("one", "echo $WHO; pwd")).containsEntry("stdout", "one\n/tmp\n");
    assertThat(inSession("two", "echo $WHO; pwd"))
        .containsEntry("stdout", "two\n" + agent.workspace().toRealPath() + "\n");
  }

  @Test
  void commandsInOneSessionRunOneAfterAnother() throws Exception {
    String first = bash.start("command", "sleep 0.3; echo first", "session", "s");
    String second = bash.start("command", "echo second", "session", "s");
    assertThat(bash.await(first, Duration.ofSeconds(5)).stdout.toString()).isEqualTo("first\n");
    assertThat(bash.await(second, Duration.ofSeconds(5)).stdout.toString()).isEqualTo("second\n");
  }

  @Test
  @SuppressWarnings("unchecked")
  void sessionsCanBeListedInspectedAndDeleted() throws Exception {
    HttpResponse<String> created = agent.postJson("/api/sessions", BashClient.body("name", "made"));
    assertThat(created.statusCode()).isEqualTo(201);
    inSession("used", "true");

    List<Map<String, Object>> items =
        (List<Map<String, Object>>) AgentFixture.json(agent.get("/api/sessions")).get("items");
    assertThat(items).extracting(s -> s.get("name")).containsExactly("made", "used");
    Map<String, Object> used = AgentFixture.json(agent.get("/api/sessions/used"));
    assertThat(used).containsEntry("busy", false).containsEntry("command_count", 1);
    long pid = ((Number) used.get("pid")).longValue();

    assertThat(agent.delete("/api/sessions/used").statusCode()).isEqualTo(200);
    assertThat(agent.get("/api/sessions/used").statusCode()).isEqualTo(404);
    assertThat(agent.delete("/api/sessions/used").statusCode()).isEqualTo(404);
    Awaitility.await("session shell gone")
        .atMost(Duration.ofSeconds(5))
        .until(() -> BashClient.gone(pid));
  }

  @Test
  void deletingABusySessionEndsItsCommand() throws Exception {
    String id = bash.start("command", "sleep 1000", "session", "s", "timeout", 10);
    Awaitility.await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () -> Boolean.TRUE.equals(AgentFixture.json(agent.get("/api/sessions/s")).get("busy")));
    assertThat(agent.delete("/api/sessions/s").statusCode()).isEqualTo(200);
    BashClient.Polled polled = bash.await(id, Duration.ofSeconds(5));
    assertThat(polled.exitCode()).isNotZero();
  }

  @Test
  void anInvalidSessionNameIs422() throws Exception {
    for (String name : List.of("../etc", "", "with space", "-dash", "x".repeat(65))) {
      HttpResponse<String> created = agent.postJson("/api/sessions", BashClient.body("name", name));
      assertThat(created.statusCode()).as(name).isEqualTo(422);
      HttpResponse<String> run =
          agent.postJson(
              "/api/bash/execute_bash_command",
              BashClient.body("command", "true", "session", name));
      assertThat(run.statusCode()).as(name).isEqualTo(422);
    }
    assertThat((List<?>) AgentFixture.json(agent.get("/api/sessions")).get("items")).isEmpty();
  }

  @Test
  void stdinOrEnvInASessionIs400AndCreatesNoSession() throws Exception {
    HttpResponse<String> withStdin =
        agent.postJson(
            "/api/bash/start_bash_command",
            BashClient.body("command", "cat", "session", "s", "stdin", true));
    assertThat(withStdin.statusCode()).isEqualTo(400);
    HttpResponse<String> withEnv =
        agent.postJson(
            "/api/bash/start_bash_command",
            BashClient.body("command", "env", "session", "s", "env", Map.of("A", "1")));
    assertThat(withEnv.statusCode()).isEqualTo(400);
    assertThat((List<?>) AgentFixture.json(agent.get("/api/sessions")).get("items")).isEmpty();
  }
}
