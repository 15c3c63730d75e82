package dev.paddock.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code idle_time} counts work, not only requests: a running command and an open event socket keep
 * the agent busy (0), and the idle clock starts when they end. {@code /server_info} itself, read
 * here without a key as the control plane does, is never activity.
 */
class IdleTimeTest {
  @RegisterExtension final AgentFixture agent = new AgentFixture();

  private double idleTime() throws Exception {
    HttpRequest request = HttpRequest.newBuilder(agent.uri("/server_info")).GET().build();
    return ((Number) AgentFixture.json(agent.send(request)).get("idle_time")).doubleValue();
  }

  @Test
  void aRunningCommandKeepsTheAgentBusyAndTheIdleClockStartsWhenItEnds() throws Exception {
    Path started = agent.workspace().resolve("started");
    long before = System.nanoTime();
    assertThat(
            agent
                .postJson(
                    "/api/bash/start_bash_command",
                    "{\"command\": \"touch started; sleep 3\", \"timeout\": 30}")
                .statusCode())
        .isEqualTo(200);
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> Files.exists(started));

    Awaitility.await("busy for as long as the command runs")
        .during(Duration.ofMillis(1500))
        .atMost(Duration.ofSeconds(3))
        .until(() -> idleTime() == 0);
    Awaitility.await("idle once the command ended")
        .atMost(Duration.ofSeconds(10))
        .until(() -> idleTime() > 0.5);
    double idle = idleTime();
    double sinceStart = (System.nanoTime() - before) / 1e9;

    assertThat(idle)
        .as("counted from the command's end (3 s after it started), not from its request")
        .isLessThanOrEqualTo(sinceStart - 2.5);
  }

  @Test
  void anOpenEventSocketKeepsTheAgentBusyUntilItCloses() throws Exception {
    try (WsClient ws =
        WsClient.connect(agent, "/sockets/events", "X-Session-API-Key", AgentFixture.KEY)) {
      Awaitility.await("busy while the socket is open, whatever the time since the last request")
          .during(Duration.ofMillis(1500))
          .atMost(Duration.ofSeconds(5))
          .until(() -> idleTime() == 0);
      assertThat(ws.closeCode).as("the socket stayed open").isNotDone();
    }
    Awaitility.await("idle after the socket closed")
        .atMost(Duration.ofSeconds(10))
        .until(() -> idleTime() > 0.3);
  }

  @Test
  void aSocketThatNeverAuthenticatesIsNotActivity() throws Exception {
    try (WsClient ws = WsClient.connect(agent, "/sockets/events")) {
      Awaitility.await("idle though an unauthenticated socket is open")
          .atMost(Duration.ofSeconds(5))
          .until(() -> idleTime() > 0.5);
      assertThat(ws.closeCode).as("still within its auth window").isNotDone();
    }
  }
}
