package dev.paddock.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.http.Json;
import java.io.IOException;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.awaitility.Awaitility;

/**
 * The bash API as the OpenHands SDK uses it, over an {@link AgentFixture}: start a command, then
 * poll {@code bash_events/search} with {@code command_id__eq}, {@code kind__eq=BashOutput} and
 * {@code order__gt} until an event carries an exit code.
 */
final class BashClient {
  private final AgentFixture agent;

  BashClient(AgentFixture agent) {
    this.agent = agent;
  }

  /** A JSON object from alternating names and values, e.g. {@code body("command", "ls")}. */
  static String body(Object... namesAndValues) {
    Map<String, Object> map = new LinkedHashMap<>();
    for (int i = 0; i < namesAndValues.length; i += 2) {
      map.put((String) namesAndValues[i], namesAndValues[i + 1]);
    }
    return Json.string(map);
  }

  /** {@code execute_bash_command}: waits for the command and returns its last output event. */
  Map<String, Object> execute(Object... namesAndValues) throws IOException, InterruptedException {
    HttpResponse<String> response =
        agent.postJson("/api/bash/execute_bash_command", body(namesAndValues));
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return AgentFixture.json(response);
  }

  /** {@code start_bash_command}: returns the command id at once. */
  String start(Object... namesAndValues) throws IOException, InterruptedException {
    HttpResponse<String> response =
        agent.postJson("/api/bash/start_bash_command", body(namesAndValues));
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    Map<String, Object> command = AgentFixture.json(response);
    assertThat(command).containsEntry("kind", "BashCommand");
    return (String) command.get("id");
  }

  /** One page of output events of a command, after {@code orderAbove} (SDK polling). */
  List<Map<String, Object>> outputsAfter(String commandId, int orderAbove)
      throws IOException, InterruptedException {
    String query =
        "command_id__eq="
            + commandId
            + "&kind__eq=BashOutput&sort_order=TIMESTAMP&limit=100"
            + (orderAbove >= 0 ? "&order__gt=" + orderAbove : "");
    HttpResponse<String> response = agent.get("/api/bash/bash_events/search?" + query);
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> items =
        (List<Map<String, Object>>) AgentFixture.json(response).get("items");
    return items;
  }

  /** Polls until the command's exit event arrives; fails on a duplicate event. */
  Polled await(String commandId, Duration atMost) {
    Polled polled = new Polled();
    Awaitility.await("exit event of " + commandId)
        .atMost(atMost)
        .pollInterval(Duration.ofMillis(50))
        .until(() -> polled.add(outputsAfter(commandId, polled.lastOrder)));
    return polled;
  }

  /** Output gathered by polling, as the SDK concatenates it. */
  static final class Polled {
    final StringBuilder stdout = new StringBuilder();
    final StringBuilder stderr = new StringBuilder();
    final List<Map<String, Object>> events = new ArrayList<>();
    private final Set<Object> ids = new HashSet<>();
    int lastOrder = -1;

    /** Adds a page; true once the exit event is in. */
    boolean add(List<Map<String, Object>> page) {
      for (Map<String, Object> event : page) {
        assertThat(ids.add(event.get("id"))).as("event seen twice: %s", event).isTrue();
        events.add(event);
        lastOrder = ((Number) event.get("order")).intValue();
        if (event.get("stdout") != null) {
          stdout.append(event.get("stdout"));
        }
        if (event.get("stderr") != null) {
          stderr.append(event.get("stderr"));
        }
      }
      return !events.isEmpty() && last().get("exit_code") != null;
    }

    Map<String, Object> last() {
      return events.get(events.size() - 1);
    }

    int exitCode() {
      return ((Number) last().get("exit_code")).intValue();
    }
  }

  static String urlEncode(String text) {
    return URLEncoder.encode(text, StandardCharsets.UTF_8);
  }

  /**
   * True when {@code pid} no longer runs: gone from {@code /proc}, or a zombie waiting for a parent
   * that does not reap (an orphan adopted by a container's init).
   */
  static boolean gone(long pid) {
    Path stat = Path.of("/proc", Long.toString(pid), "stat");
    try {
      String text = Files.readString(stat);
      // Field 3 (state) follows the ")" that closes the command name.
      return text.substring(text.lastIndexOf(')') + 2).startsWith("Z");
    } catch (IOException e) {
      return true;
    }
  }
}
