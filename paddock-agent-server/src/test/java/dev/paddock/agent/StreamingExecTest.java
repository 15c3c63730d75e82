package dev.paddock.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code POST /api/bash/stream}: NDJSON lines as output happens. */
class StreamingExecTest {
  @RegisterExtension final AgentFixture agent = new AgentFixture();

  private final BashClient bash = new BashClient(agent);

  /** One received line and when it arrived. */
  record Line(Map<String, Object> value, long atNanos) {
    Object type() {
      return value.get("type");
    }
  }

  private CompletableFuture<HttpResponse<Stream<String>>> open(Object... namesAndValues) {
    return agent
        .client()
        .sendAsync(
            agent
                .request("/api/bash/stream")
                .header("Content-Type", "application/json")
                .POST(
                    java.net.http.HttpRequest.BodyPublishers.ofString(
                        BashClient.body(namesAndValues)))
                .build(),
            HttpResponse.BodyHandlers.ofLines());
  }

  private List<Line> stream(Object... namesAndValues) throws Exception {
    HttpResponse<Stream<String>> response = open(namesAndValues).get(10, TimeUnit.SECONDS);
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("Content-Type")).hasValue("application/x-ndjson");
    List<Line> lines = new ArrayList<>();
    try (Stream<String> body = response.body()) {
      Iterator<String> it = body.iterator();
      while (it.hasNext()) {
        lines.add(new Line(parse(it.next()), System.nanoTime()));
      }
    }
    return lines;
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> parse(String line) {
    return (Map<String, Object>)
        dev.paddock.http.Json.parseAny(line.getBytes(java.nio.charset.StandardCharsets.UTF_8));
  }

  private static String joined(List<Line> lines, String type) {
    StringBuilder s = new StringBuilder();
    lines.stream()
        .filter(l -> type.equals(l.type()))
        .forEach(l -> s.append((String) l.value().get("data")));
    return s.toString();
  }

  @Test
  void streamsStartThenOutputInOrderThenExitLast() throws Exception {
    List<Line> lines =
        stream("command", "for i in $(seq 1 20); do echo $i; sleep 0.01; done; exit 3");
    assertThat(lines.get(0).type()).isEqualTo("start");
    assertThat(lines.get(0).value()).containsKey("command_id");
    StringBuilder expected = new StringBuilder();
    for (int i = 1; i <= 20; i++) {
      expected.append(i).append('\n');
    }
    assertThat(joined(lines, "stdout")).isEqualTo(expected.toString());
    Line last = lines.get(lines.size() - 1);
    assertThat(last.type()).isEqualTo("exit");
    assertThat(last.value()).containsEntry("exit_code", 3).containsEntry("timed_out", false);
    assertThat(lines.stream().filter(l -> "exit".equals(l.type()))).hasSize(1);
  }

  @Test
  void outputArrivesWhileTheCommandRuns() throws Exception {
    List<Line> lines = stream("command", "echo early; sleep 0.6; echo late");
    Line early =
        lines.stream().filter(l -> "early\n".equals(l.value().get("data"))).findFirst().get();
    Line exit = lines.get(lines.size() - 1);
    assertThat(Duration.ofNanos(exit.atNanos() - early.atNanos()))
        .as("first chunk delivered before the command ended")
        .isGreaterThan(Duration.ofMillis(400));
  }

  @Test
  void keepsStdoutAndStderrApart() throws Exception {
    List<Line> lines = stream("command", "echo out; echo err >&2; echo out2; echo err2 >&2");
    assertThat(joined(lines, "stdout")).isEqualTo("out\nout2\n");
    assertThat(joined(lines, "stderr")).isEqualTo("err\nerr2\n");
  }

  @Test
  void neverSplitsAMultiByteCharacterAcrossChunks() throws Exception {
    List<Line> lines =
        stream(
            "command",
            "printf '\\xe2\\x82'; sleep 0.2; printf '\\xac\\n';"
                + " printf '\\xf0\\x9f' >&2; sleep 0.2; printf '\\x98\\x80' >&2;"
                + " printf '\\xc3'; sleep 0.2; printf '\\xa9'");
    assertThat(joined(lines, "stdout")).isEqualTo("\u20ac\né");
    assertThat(joined(lines, "stderr")).isEqualTo("\uD83D\uDE00");
    assertThat(lines)
        .filteredOn(l -> l.value().containsKey("data"))
        .allSatisfy(l -> assertThat((String) l.value().get("data")).doesNotContain("\uFFFD"));
  }

  @Test
  void aTimeoutEndsTheStreamWithTimedOut() throws Exception {
    List<Line> lines = stream("command", "echo a; sleep 1000", "timeout", 1);
    assertThat(lines.get(lines.size() - 1).value())
        .containsEntry("type", "exit")
        .containsEntry("exit_code", -1)
        .containsEntry("timed_out", true);
  }

  @Test
  void aStreamedCommandIsInTheHistoryToo() throws Exception {
    List<Line> lines = stream("command", "echo kept");
    String id = (String) lines.get(0).value().get("command_id");
    assertThat(bash.await(id, Duration.ofSeconds(5)).stdout.toString()).isEqualTo("kept\n");
  }

  @Test
  void aBadRequestIsRefusedBeforeStreamingAndABadCwdIsReportedInBand() throws Exception {
    HttpResponse<String> missingDir =
        agent.postJson("/api/bash/stream", BashClient.body("command", "ls", "cwd", "/no/such"));
    // A command's own input is reported in band: the stream starts, says why, and ends with -1.
    assertThat(missingDir.statusCode()).isEqualTo(200);
    assertThat(missingDir.body())
        .contains("\"type\":\"stderr\"", "is not an existing directory", "\"exit_code\":-1");
    HttpResponse<String> noCommand = agent.postJson("/api/bash/stream", "{}");
    assertThat(noCommand.statusCode()).isEqualTo(422);
  }
}
