package dev.paddock.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The event history is bounded by count and by spooled bytes; what is dropped leaves no file. */
class RetentionTest {
  private static final int MAX_EVENTS = 6;
  private static final long MAX_SPOOL = 100;

  @RegisterExtension
  final AgentFixture agent =
      new AgentFixture(b -> b.maxEvents(MAX_EVENTS).maxSpoolBytes(MAX_SPOOL));

  private final BashClient bash = new BashClient(agent);

  private Path spool(String commandId) {
    return agent.workspace().resolveSibling("events").resolve(commandId + ".stdout");
  }

  private int eventCount() throws Exception {
    return ((List<?>)
            AgentFixture.json(agent.get("/api/bash/bash_events/search?limit=100")).get("items"))
        .size();
  }

  private String run(String command) throws Exception {
    String id = bash.start("command", command);
    bash.await(id, Duration.ofSeconds(5));
    return id;
  }

  @Test
  void oldEventsAreDroppedWithTheirSpoolFiles() throws Exception {
    String first = run("echo first");
    assertThat(spool(first)).exists();
    for (int i = 0; i < MAX_EVENTS; i++) {
      run("echo " + i);
    }
    Awaitility.await("first command forgotten")
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(
            () -> {
              assertThat(agent.get("/api/bash/bash_events/" + first).statusCode()).isEqualTo(404);
              assertThat(spool(first)).doesNotExist();
            });
    assertThat(eventCount()).isLessThanOrEqualTo(MAX_EVENTS);
    assertThat(agent.get("/api/bash/commands/" + first).statusCode()).isEqualTo(404);
  }

  @Test
  void theNewestCommandSurvivesTheCountBound() throws Exception {
    String last = null;
    for (int i = 0; i < MAX_EVENTS; i++) {
      last = run("echo " + i);
    }
    assertThat(bash.outputsAfter(last, -1)).isNotEmpty();
    assertThat(spool(last)).exists();
  }

  @Test
  void oldCommandsGoWhenTheSpoolIsOverItsByteBound() throws Exception {
    String older = run("head -c 80 /dev/zero | tr '\\0' a");
    assertThat(spool(older)).exists();
    String newer = run("head -c 80 /dev/zero | tr '\\0' b");
    Awaitility.await("older command's spool released")
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(
            () -> {
              assertThat(spool(older)).doesNotExist();
              assertThat(agent.get("/api/bash/bash_events/" + older).statusCode()).isEqualTo(404);
            });
    assertThat(spool(newer)).exists();
    assertThat(bash.outputsAfter(newer, -1))
        .extracting(e -> e.get("stdout"))
        .containsExactly("b".repeat(80));
  }

  @Test
  void executeReturnsTheWholeOutputEvenWhenItAloneExceedsTheSpoolBound() throws Exception {
    List<String> ids = new java.util.ArrayList<>();
    for (int i = 0; i < 5; i++) {
      Map<String, Object> result = bash.execute("command", "head -c 300 /dev/zero | tr '\\0' z");
      assertThat(result).containsEntry("stdout", "z".repeat(300)).containsEntry("exit_code", 0);
      ids.add((String) result.get("command_id"));
    }
    Awaitility.await("spools over the bound released once read")
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(
            () -> assertThat(ids).allSatisfy(id -> assertThat(spool(id)).doesNotExist()));
  }

  @Test
  void clearingTheHistoryDeletesSpoolFiles() throws Exception {
    String id = run("echo spooled");
    assertThat(spool(id)).exists();
    Map<String, Object> cleared = AgentFixture.json(agent.delete("/api/bash/bash_events"));
    assertThat(((Number) cleared.get("cleared_count")).intValue()).isPositive();
    assertThat(spool(id)).doesNotExist();
    assertThat(Files.exists(spool(id).resolveSibling(id + ".stderr"))).isFalse();
  }
}
