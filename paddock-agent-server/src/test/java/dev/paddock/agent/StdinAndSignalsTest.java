package dev.paddock.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Live control of running commands: their stdin and signals to their process tree. */
class StdinAndSignalsTest {
  @RegisterExtension final AgentFixture agent = new AgentFixture();

  private final BashClient bash = new BashClient(agent);

  private HttpResponse<String> stdin(String id, String query, String data) throws Exception {
    return agent.send(
        agent
            .request("/api/bash/commands/" + id + "/stdin" + query)
            .header("Content-Type", "application/octet-stream")
            .POST(HttpRequest.BodyPublishers.ofString(data))
            .build());
  }

  private HttpResponse<String> signal(String id, String signal) throws Exception {
    return agent.postJson(
        "/api/bash/commands/" + id + "/signal", BashClient.body("signal", signal));
  }

  private void awaitStdout(String id, String text) {
    Awaitility.await("'" + text + "' on stdout")
        .atMost(Duration.ofSeconds(5))
        .pollInterval(Duration.ofMillis(50))
        .until(
            () ->
                bash.outputsAfter(id, -1).stream()
                    .anyMatch(e -> String.valueOf(e.get("stdout")).contains(text)));
  }

  @Test
  void catReadsWhatIsPostedUntilEof() throws Exception {
    String id = bash.start("command", "cat; echo end", "stdin", true, "timeout", 10);
    HttpResponse<String> first = stdin(id, "", "hello\n");
    assertThat(first.statusCode()).as(first.body()).isEqualTo(200);
    assertThat(AgentFixture.json(first)).containsEntry("written", 6).containsEntry("closed", false);
    assertThat(stdin(id, "?eof=true", "world\n").statusCode()).isEqualTo(200);

    BashClient.Polled polled = bash.await(id, Duration.ofSeconds(5));
    assertThat(polled.stdout.toString()).isEqualTo("hello\nworld\nend\n");
    assertThat(polled.exitCode()).isZero();
  }

  private HttpResponse<Stream<String>> streamWithStdin(String command) throws Exception {
    return agent
        .client()
        .sendAsync(
            agent
                .request("/api/bash/stream")
                .POST(
                    HttpRequest.BodyPublishers.ofString(
                        BashClient.body("command", command, "stdin", true, "timeout", 10)))
                .build(),
            HttpResponse.BodyHandlers.ofLines())
        .get(10, TimeUnit.SECONDS);
  }

  @Test
  void theStartLineIdTakesStdinAndSignalsAtOnce() throws Exception {
    for (int i = 0; i < 15; i++) {
      String signal = i % 2 == 0 ? null : "TERM";
      try (Stream<String> lines = streamWithStdin("cat").body()) {
        Iterator<String> it = lines.iterator();
        String id = (String) StreamingExecTest.parse(it.next()).get("command_id");
        HttpResponse<String> sent =
            signal == null ? stdin(id, "?eof=true", "x") : signal(id, signal);
        assertThat(sent.statusCode()).as("attempt %d: %s", i, sent.body()).isEqualTo(200);
        it.forEachRemaining(line -> {});
      }
    }
  }

  @Test
  void readSeesALineSentToAStreamedCommand() throws Exception {
    HttpResponse<Stream<String>> response = streamWithStdin("read line; echo got:$line");
    try (Stream<String> lines = response.body()) {
      Iterator<String> it = lines.iterator();
      Map<String, Object> start = StreamingExecTest.parse(it.next());
      String id = (String) start.get("command_id");
      assertThat(stdin(id, "?eof=true", "paddock\n").statusCode()).isEqualTo(200);
      StringBuilder out = new StringBuilder();
      Map<String, Object> last = start;
      while (it.hasNext()) {
        last = StreamingExecTest.parse(it.next());
        if ("stdout".equals(last.get("type"))) {
          out.append(last.get("data"));
        }
      }
      assertThat(out.toString()).isEqualTo("got:paddock\n");
      assertThat(last).containsEntry("type", "exit").containsEntry("exit_code", 0);
    }
  }

  @Test
  void eofAloneClosesStdin() throws Exception {
    String id = bash.start("command", "wc -c", "stdin", true, "timeout", 10);
    assertThat(stdin(id, "?eof=true", "").statusCode()).isEqualTo(200);
    assertThat(bash.await(id, Duration.ofSeconds(5)).stdout.toString().trim()).isEqualTo("0");
  }

  @Test
  void stdinAfterEofIs409() throws Exception {
    String id = bash.start("command", "cat >/dev/null; sleep 1000", "stdin", true, "timeout", 10);
    assertThat(stdin(id, "?eof=true", "x").statusCode()).isEqualTo(200);
    assertThat(stdin(id, "", "more").statusCode()).isEqualTo(409);
    signal(id, "KILL");
    bash.await(id, Duration.ofSeconds(5));
  }

  @Test
  void stdinToAFinishedCommandIs409() throws Exception {
    String id = bash.start("command", "true", "stdin", true);
    bash.await(id, Duration.ofSeconds(5));
    HttpResponse<String> response = stdin(id, "", "late");
    assertThat(response.statusCode()).isEqualTo(409);
    assertThat(AgentFixture.json(response)).containsKey("detail");
  }

  @Test
  void stdinToACommandStartedWithoutItIs409() throws Exception {
    String id = bash.start("command", "sleep 1000", "timeout", 10);
    assertThat(stdin(id, "", "x").statusCode()).isEqualTo(409);
    signal(id, "KILL");
    bash.await(id, Duration.ofSeconds(5));
  }

  @Test
  void stdinToAnUnknownCommandIs404() throws Exception {
    assertThat(stdin("no-such-command", "", "x").statusCode()).isEqualTo(404);
  }

  @Test
  void stdinWithAnUnknownQueryParameterIs422() throws Exception {
    String id = bash.start("command", "cat", "stdin", true, "timeout", 10);
    assertThat(stdin(id, "?eoff=true", "x").statusCode()).isEqualTo(422);
    assertThat(stdin(id, "?eof=maybe", "x").statusCode()).isEqualTo(422);
    stdin(id, "?eof=true", "");
    bash.await(id, Duration.ofSeconds(5));
  }

  @Test
  void interruptStopsASleep() throws Exception {
    String id = bash.start("command", "sleep 1000", "timeout", 10);
    Awaitility.await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> signal(id, "INT").statusCode() == 200);
    BashClient.Polled polled = bash.await(id, Duration.ofSeconds(5));
    assertThat(polled.exitCode()).isEqualTo(130);
    assertThat(polled.last()).containsEntry("timed_out", false);
  }

  @Test
  void aTrappedSignalRunsItsHandler() throws Exception {
    String id =
        bash.start(
            "command",
            "trap 'echo got-usr1; exit 7' USR1; echo ready; while :; do sleep 0.05; done",
            "timeout",
            10);
    awaitStdout(id, "ready");
    HttpResponse<String> sent = signal(id, "SIGUSR1");
    assertThat(sent.statusCode()).isEqualTo(200);
    assertThat(AgentFixture.json(sent)).containsEntry("signal", "USR1");
    BashClient.Polled polled = bash.await(id, Duration.ofSeconds(5));
    assertThat(polled.stdout.toString()).contains("got-usr1");
    assertThat(polled.exitCode()).isEqualTo(7);
  }

  @Test
  void anUnknownSignalIs422() throws Exception {
    String id = bash.start("command", "sleep 1000", "timeout", 10);
    assertThat(signal(id, "BOGUS").statusCode()).isEqualTo(422);
    assertThat(signal(id, "").statusCode()).isEqualTo(422);
    assertThat(signal(id, "SIGKILL ").statusCode()).isEqualTo(422);
    assertThat(signal(id, "KILL\u0000").statusCode()).isEqualTo(422);
    signal(id, "KILL");
    bash.await(id, Duration.ofSeconds(5));
  }

  @Test
  void signalToAFinishedCommandIs409AndToAnUnknownOneIs404() throws Exception {
    String id = bash.start("command", "true");
    bash.await(id, Duration.ofSeconds(5));
    assertThat(signal(id, "INT").statusCode()).isEqualTo(409);
    assertThat(signal("no-such-command", "INT").statusCode()).isEqualTo(404);
  }

  @Test
  void interruptInASessionStopsTheCommandButKeepsTheShell() throws Exception {
    bash.execute("command", "export KEEP=yes", "session", "s");
    String id = bash.start("command", "sleep 1000", "session", "s", "timeout", 10);
    Awaitility.await()
        .atMost(Duration.ofSeconds(5))
        .pollInterval(Duration.ofMillis(50))
        .until(
            () -> {
              // The shell may not have forked sleep yet when the first signal goes out.
              signal(id, "INT");
              return !bash.outputsAfter(id, -1).isEmpty();
            });
    BashClient.Polled polled = bash.await(id, Duration.ofSeconds(5));
    assertThat(polled.exitCode()).isEqualTo(130);
    assertThat(bash.execute("command", "echo $KEEP", "session", "s"))
        .containsEntry("stdout", "yes\n")
        .doesNotContainKey("session_reset");
  }
}
