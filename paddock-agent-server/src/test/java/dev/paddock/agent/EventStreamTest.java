package dev.paddock.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Paddock's event stream, over NDJSON and WebSocket: a client that reconnects with the last {@code
 * order} it saw gets exactly the rest, without loss or duplicates, including what was logged while
 * it was away.
 */
class EventStreamTest {
  @RegisterExtension final AgentFixture agent = new AgentFixture();

  private final BashClient bash = new BashClient(agent);

  private static final String SLOW_COUNT = "for i in $(seq 1 40); do echo line$i; sleep 0.03; done";

  private static final String EXPECTED =
      IntStream.rangeClosed(1, 40).mapToObj(i -> "line" + i + "\n").collect(Collectors.joining());

  /** The frames read so far over all connections. */
  private final List<Map<String, Object>> frames = new ArrayList<>();

  private InputStream open(String query) throws Exception {
    HttpResponse<InputStream> response =
        agent
            .client()
            .send(
                agent.request("/api/bash/events?" + query).GET().build(),
                HttpResponse.BodyHandlers.ofInputStream());
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("Content-Type")).hasValue("application/x-ndjson");
    return response.body();
  }

  /** Reads event frames until {@code count} are in or the stream ends; returns the last order. */
  private long read(BufferedReader lines, int count) throws Exception {
    long last = -1;
    int read = 0;
    String line;
    while (read < count && (line = lines.readLine()) != null) {
      Map<String, Object> frame = AgentFixture.json(line);
      if (!"event".equals(frame.get("type"))) {
        continue;
      }
      frames.add(frame);
      last = ((Number) frame.get("order")).longValue();
      read++;
    }
    return last;
  }

  @SuppressWarnings("unchecked")
  private String stdout() {
    return frames.stream()
        .map(f -> (Map<String, Object>) f.get("event"))
        .filter(e -> "BashOutput".equals(e.get("kind")) && e.get("stdout") != null)
        .map(e -> (String) e.get("stdout"))
        .collect(Collectors.joining());
  }

  private void assertOrdersStrictlyIncrease() {
    List<Long> orders = frames.stream().map(f -> ((Number) f.get("order")).longValue()).toList();
    for (int i = 1; i < orders.size(); i++) {
      assertThat(orders.get(i))
          .as("order after %s", orders.get(i - 1))
          .isGreaterThan(orders.get(i - 1));
    }
  }

  @Test
  void anNdjsonClientThatReconnectsMidStreamGetsExactlyTheRest() throws Exception {
    String id = bash.start("command", SLOW_COUNT);
    long last;
    try (InputStream first = open("command_id=" + id)) {
      last = read(new BufferedReader(new InputStreamReader(first, StandardCharsets.UTF_8)), 3);
    }
    assertThat(last).isNotNegative();
    int seen = frames.size();
    // While the client is away the command goes on: events arrive that it has not seen.
    Awaitility.await("more output while disconnected")
        .atMost(Duration.ofSeconds(10))
        .until(() -> bash.outputsAfter(id, -1).size() > seen + 2);

    try (InputStream second = open("command_id=" + id + "&from_order=" + last)) {
      read(new BufferedReader(new InputStreamReader(second, StandardCharsets.UTF_8)), 1000);
    }
    assertThat(stdout()).isEqualTo(EXPECTED);
    assertOrdersStrictlyIncrease();
    @SuppressWarnings("unchecked")
    Map<String, Object> end = (Map<String, Object>) frames.get(frames.size() - 1).get("event");
    assertThat(end).containsEntry("exit_code", 0).containsEntry("command_id", id);
  }

  @Test
  void theStreamOfEveryCommandStartsWithTheRetainedHistoryAndFollowsLive() throws Exception {
    Map<String, Object> done = bash.execute("command", "echo earlier");
    try (InputStream stream = open("from_order=-1")) {
      BufferedReader lines =
          new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8));
      read(lines, 2); // The earlier command's BashCommand and BashOutput.
      String id = bash.start("command", "echo later");
      read(lines, 2);
      @SuppressWarnings("unchecked")
      List<Object> commandIds =
          frames.stream()
              .map(f -> ((Map<String, Object>) f.get("event")))
              .map(e -> e.getOrDefault("command_id", e.get("id")))
              .toList();
      assertThat(commandIds)
          .containsExactly(done.get("command_id"), done.get("command_id"), id, id);
    }
    assertThat(stdout()).isEqualTo("earlier\nlater\n");
    assertOrdersStrictlyIncrease();
  }

  @Test
  void anUnknownCommandIs404() throws Exception {
    assertThat(agent.get("/api/bash/events?command_id=nope").statusCode()).isEqualTo(404);
    assertThat(agent.get("/api/bash/events?from_order=x").statusCode()).isEqualTo(422);
  }

  @Test
  void aWebSocketClientThatReconnectsByOrderGetsExactlyTheRest() throws Exception {
    String id = bash.start("command", SLOW_COUNT);
    long last = -1;
    try (WsClient first =
        WsClient.connect(
            agent, "/sockets/events?command_id=" + id, "X-Session-API-Key", AgentFixture.KEY)) {
      for (int i = 0; i < 3; i++) {
        Map<String, Object> frame = first.next(10);
        if ("event".equals(frame.get("type"))) {
          frames.add(frame);
          last = ((Number) frame.get("order")).longValue();
        }
      }
    }
    int seen = frames.size();
    Awaitility.await("more output while disconnected")
        .atMost(Duration.ofSeconds(10))
        .until(() -> bash.outputsAfter(id, -1).size() > seen + 2);
    try (WsClient second =
        WsClient.connect(agent, "/sockets/events?command_id=" + id + "&from_order=" + last)) {
      second.auth(AgentFixture.KEY);
      while (true) {
        Map<String, Object> frame = second.next(20);
        if (!"event".equals(frame.get("type"))) {
          continue;
        }
        frames.add(frame);
        @SuppressWarnings("unchecked")
        Map<String, Object> event = (Map<String, Object>) frame.get("event");
        if (event.get("exit_code") != null) {
          break;
        }
      }
      // The stream of one command ends with it.
      assertThat(second.awaitClose()).isEqualTo(1000);
    }
    assertThat(stdout()).isEqualTo(EXPECTED);
    assertOrdersStrictlyIncrease();
  }
}
