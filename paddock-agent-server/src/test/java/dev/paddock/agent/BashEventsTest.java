package dev.paddock.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Background commands and the event history, used the way the OpenHands SDK polls it. */
class BashEventsTest {
  @RegisterExtension final AgentFixture agent = new AgentFixture();

  private final BashClient bash = new BashClient(agent);

  @SuppressWarnings("unchecked")
  private List<Map<String, Object>> search(String query) throws Exception {
    HttpResponse<String> response = agent.get("/api/bash/bash_events/search?" + query);
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return (List<Map<String, Object>>) AgentFixture.json(response).get("items");
  }

  @Test
  void startReturnsTheCommandAtOnceAndPollingCollectsItsOutput() throws Exception {
    HttpResponse<String> started =
        agent.postJson(
            "/api/bash/start_bash_command",
            BashClient.body("command", "sleep 0.3; echo done; echo oops >&2; exit 4"));
    assertThat(started.statusCode()).isEqualTo(200);
    Map<String, Object> command = AgentFixture.json(started);
    assertThat(command)
        .containsEntry("kind", "BashCommand")
        .containsEntry("command", "sleep 0.3; echo done; echo oops >&2; exit 4")
        .containsKeys("id", "timestamp", "timeout");

    BashClient.Polled polled = bash.await((String) command.get("id"), Duration.ofSeconds(10));
    assertThat(polled.stdout.toString()).isEqualTo("done\n");
    assertThat(polled.stderr.toString()).isEqualTo("oops\n");
    assertThat(polled.exitCode()).isEqualTo(4);
    assertThat(polled.events)
        .allSatisfy(e -> assertThat(e).containsEntry("command_id", command.get("id")));
  }

  @Test
  void outputOfARunningCommandShowsUpBeforeItEnds() throws Exception {
    String id = bash.start("command", "echo first; sleep 1000", "timeout", 2);
    Awaitility.await("first line visible while the command runs")
        .atMost(Duration.ofSeconds(1))
        .pollInterval(Duration.ofMillis(50))
        .until(
            () ->
                bash.outputsAfter(id, -1).stream()
                    .anyMatch(
                        e -> "first\n".equals(e.get("stdout")) && e.get("exit_code") == null));
    agent.postJson("/api/bash/commands/" + id + "/signal", BashClient.body("signal", "KILL"));
    bash.await(id, Duration.ofSeconds(5));
  }

  @Test
  void longOutputArrivesInOrderWithoutGapsOrDuplicates() throws Exception {
    String id = bash.start("command", "for i in $(seq 1 30); do echo line$i; sleep 0.02; done");
    BashClient.Polled polled = bash.await(id, Duration.ofSeconds(10));
    StringBuilder expected = new StringBuilder();
    for (int i = 1; i <= 30; i++) {
      expected.append("line").append(i).append('\n');
    }
    assertThat(polled.stdout.toString()).isEqualTo(expected.toString());
    List<Integer> orders = new ArrayList<>();
    polled.events.forEach(e -> orders.add(((Number) e.get("order")).intValue()));
    assertThat(orders)
        .as("orders count up from 0")
        .isSorted()
        .startsWith(0)
        .doesNotHaveDuplicates();
    assertThat(polled.events).as("cut into several events while running").hasSizeGreaterThan(1);
  }

  @Test
  void searchFiltersByKindAndCommandAndSortsBothWays() throws Exception {
    String first = bash.start("command", "echo one");
    bash.await(first, Duration.ofSeconds(5));
    String second = bash.start("command", "echo two");
    bash.await(second, Duration.ofSeconds(5));

    assertThat(search("kind__eq=BashCommand"))
        .extracting(e -> e.get("id"))
        .containsExactly(first, second);
    assertThat(search("kind__eq=BashCommand&sort_order=TIMESTAMP_DESC"))
        .extracting(e -> e.get("id"))
        .containsExactly(second, first);
    List<Object> kinds =
        search("command_id__eq=" + second).stream().map(e -> e.get("kind")).toList();
    assertThat(kinds).first().isEqualTo("BashCommand");
    assertThat(kinds.subList(1, kinds.size())).isNotEmpty().containsOnly("BashOutput");
  }

  @Test
  void searchPagesThroughTheHistory() throws Exception {
    for (int i = 0; i < 3; i++) {
      bash.await(bash.start("command", "echo " + i), Duration.ofSeconds(5));
    }
    List<Object> all = search("limit=100").stream().map(e -> e.get("id")).toList();
    assertThat(all).hasSizeGreaterThanOrEqualTo(6);
    List<Object> paged = new ArrayList<>();
    String query = "limit=4";
    int pages = 0;
    while (query != null) {
      Map<String, Object> body =
          AgentFixture.json(agent.get("/api/bash/bash_events/search?" + query));
      List<?> items = (List<?>) body.get("items");
      assertThat(items).hasSizeLessThanOrEqualTo(4);
      items.forEach(e -> paged.add(((Map<?, ?>) e).get("id")));
      pages++;
      Object next = body.get("next_page_id");
      query = next == null ? null : "limit=4&page_id=" + next;
    }
    assertThat(paged).isEqualTo(all);
    assertThat(pages).isGreaterThanOrEqualTo(2);
  }

  @Test
  void searchFiltersByTimestamp() throws Exception {
    String id = bash.start("command", "echo x");
    bash.await(id, Duration.ofSeconds(5));
    assertThat(search("timestamp__gte=2000-01-01T00:00:00Z")).isNotEmpty();
    assertThat(search("timestamp__lt=2000-01-01T00:00:00")).isEmpty();
    assertThat(search("timestamp__gte=2999-01-01T00:00:00%2B02:00")).isEmpty();
  }

  @Test
  void eventsCanBeFetchedById() throws Exception {
    String id = bash.start("command", "echo hi");
    BashClient.Polled polled = bash.await(id, Duration.ofSeconds(5));
    HttpResponse<String> command = agent.get("/api/bash/bash_events/" + id);
    assertThat(command.statusCode()).isEqualTo(200);
    assertThat(AgentFixture.json(command)).containsEntry("kind", "BashCommand");
    String outputId = (String) polled.last().get("id");
    assertThat(AgentFixture.json(agent.get("/api/bash/bash_events/" + outputId)))
        .containsEntry("kind", "BashOutput")
        .containsEntry("stdout", "hi\n");
  }

  @Test
  void anUnknownEventIdIs404() throws Exception {
    HttpResponse<String> response = agent.get("/api/bash/bash_events/no-such-event");
    assertThat(response.statusCode()).isEqualTo(404);
    assertThat(AgentFixture.json(response)).containsKey("detail");
  }

  @Test
  void batchGetTakesIdsFromABodyListOrTheQuery() throws Exception {
    String id = bash.start("command", "echo hi");
    bash.await(id, Duration.ofSeconds(5));

    HttpResponse<String> fromBody =
        agent.send(
            agent
                .request("/api/bash/bash_events/")
                .header("Content-Type", "application/json")
                .method("GET", HttpRequest.BodyPublishers.ofString("[\"" + id + "\", \"nope\"]"))
                .build());
    assertThat(fromBody.statusCode()).as(fromBody.body()).isEqualTo(200);
    List<?> items = (List<?>) AgentFixture.jsonAny(fromBody);
    assertThat(items).hasSize(2);
    assertThat(((Map<?, ?>) items.get(0)).get("id")).isEqualTo(id);
    assertThat(items.get(1)).isNull();

    HttpResponse<String> fromQuery =
        agent.get("/api/bash/bash_events?event_ids=" + id + "&event_ids=nope");
    assertThat(fromQuery.statusCode()).isEqualTo(200);
    assertThat((List<?>) AgentFixture.jsonAny(fromQuery)).hasSize(2).last().isNull();
  }

  @Test
  void batchGetRejectsABodyThatIsNotAListOfStrings() throws Exception {
    for (String body : List.of("{\"event_ids\":[]}", "[1, 2]", "\"id\"")) {
      HttpResponse<String> response =
          agent.send(
              agent
                  .request("/api/bash/bash_events")
                  .method("GET", HttpRequest.BodyPublishers.ofString(body))
                  .build());
      assertThat(response.statusCode()).as(body).isEqualTo(422);
    }
  }

  @Test
  void deleteClearsFinishedHistoryAndCountsIt() throws Exception {
    String done = bash.start("command", "echo done");
    bash.await(done, Duration.ofSeconds(5));
    int doneEvents = search("command_id__eq=" + done).size();
    String running = bash.start("command", "sleep 1000", "timeout", 2);

    HttpResponse<String> cleared = agent.delete("/api/bash/bash_events");
    assertThat(cleared.statusCode()).isEqualTo(200);
    assertThat(AgentFixture.json(cleared)).containsEntry("cleared_count", doneEvents);
    assertThat(agent.get("/api/bash/bash_events/" + done).statusCode()).isEqualTo(404);
    assertThat(agent.get("/api/bash/bash_events/" + running).statusCode())
        .as("a running command keeps its history")
        .isEqualTo(200);
    assertThat(AgentFixture.json(agent.delete("/api/bash/bash_events")))
        .containsEntry("cleared_count", 0);
    agent.postJson("/api/bash/commands/" + running + "/signal", BashClient.body("signal", "KILL"));
    bash.await(running, Duration.ofSeconds(5));
  }

  @Test
  void badSearchParametersAre422() throws Exception {
    for (String query :
        List.of(
            "limit=101",
            "limit=0",
            "limit=ten",
            "kind__eq=Other",
            "sort_order=NEWEST",
            "order__gt=x",
            "timestamp__gte=yesterday",
            "timestamp__lt=2024-13-45T00:00:00",
            "command_id=abc",
            "limt=5")) {
      HttpResponse<String> response = agent.get("/api/bash/bash_events/search?" + query);
      assertThat(response.statusCode()).as(query + " -> " + response.body()).isEqualTo(422);
      assertThat(AgentFixture.json(response)).containsKey("detail");
    }
  }

  @Test
  void commandStatusShowsRunningThenTheResult() throws Exception {
    String id = bash.start("command", "sleep 0.3; exit 5");
    Map<String, Object> running = AgentFixture.json(agent.get("/api/bash/commands/" + id));
    assertThat(running).containsEntry("running", true);
    assertThat((List<?>) AgentFixture.json(agent.get("/api/bash/commands")).get("items"))
        .hasSize(1);
    bash.await(id, Duration.ofSeconds(5));
    assertThat(AgentFixture.json(agent.get("/api/bash/commands/" + id)))
        .containsEntry("running", false)
        .containsEntry("exit_code", 5);
    assertThat(agent.get("/api/bash/commands/nope").statusCode()).isEqualTo(404);
  }
}
