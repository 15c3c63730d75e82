package dev.paddock.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * OpenHands' {@code WS /sockets/bash-events}, driven as its clients drive it: authenticate (first
 * message, query or header), send {@code ExecuteBashRequest} frames, read {@code BashCommand} and
 * {@code BashOutput} frames until an exit code.
 */
class BashEventsSocketTest {
  @RegisterExtension final AgentFixture agent = new AgentFixture();

  private static final String PATH = "/sockets/bash-events";

  /** Frames of one command until its exit code: the command first, then its output. */
  private static List<Map<String, Object>> untilExit(WsClient ws) throws Exception {
    List<Map<String, Object>> frames = new ArrayList<>();
    while (true) {
      Map<String, Object> frame = ws.next(20);
      frames.add(frame);
      if ("BashOutput".equals(frame.get("kind")) && frame.get("exit_code") != null) {
        return frames;
      }
    }
  }

  private static String stdout(List<Map<String, Object>> frames) {
    StringBuilder out = new StringBuilder();
    for (Map<String, Object> frame : frames) {
      if (frame.get("stdout") != null) {
        out.append(frame.get("stdout"));
      }
    }
    return out.toString();
  }

  @Test
  void firstMessageAuthThenAnExecuteRequestStreamsTheCommand() throws Exception {
    try (WsClient ws = WsClient.connect(agent, PATH)) {
      ws.auth(AgentFixture.KEY);
      ws.send("{\"command\":\"echo hi; echo err >&2; exit 4\",\"cwd\":null,\"timeout\":30}");
      List<Map<String, Object>> frames = untilExit(ws);
      assertThat(frames.get(0))
          .containsEntry("kind", "BashCommand")
          .containsEntry("command", "echo hi; echo err >&2; exit 4")
          .containsEntry("timeout", 30)
          .containsKeys("id", "timestamp");
      Map<String, Object> last = frames.get(frames.size() - 1);
      assertThat(last)
          .containsEntry("command_id", frames.get(0).get("id"))
          .containsEntry("exit_code", 4)
          .containsKeys("order", "stdout", "stderr");
      assertThat(stdout(frames)).isEqualTo("hi\n");
      // A redundant auth frame is ignored; the socket keeps working.
      ws.auth(AgentFixture.KEY);
      ws.send("{\"command\":\"echo again\"}");
      assertThat(stdout(untilExit(ws))).isEqualTo("again\n");
    }
  }

  @Test
  void queryOrHeaderKeysAuthenticateAndResendAllReplaysTheHistory() throws Exception {
    Map<String, Object> earlier = new BashClient(agent).execute("command", "echo earlier");
    try (WsClient ws =
        WsClient.connect(agent, PATH + "?resend_mode=all&session_api_key=" + AgentFixture.KEY)) {
      List<Map<String, Object>> frames = untilExit(ws);
      assertThat(frames.get(0)).containsEntry("id", earlier.get("command_id"));
      assertThat(stdout(frames)).isEqualTo("earlier\n");
    }
    try (WsClient ws = WsClient.connect(agent, PATH, "X-Session-API-Key", AgentFixture.KEY)) {
      // Without resend_mode only what happens from now on arrives.
      ws.send("{\"command\":\"echo now\"}");
      List<Map<String, Object>> frames = untilExit(ws);
      assertThat(frames.get(0)).containsEntry("command", "echo now");
      assertThat(stdout(frames)).isEqualTo("now\n");
    }
  }

  @Test
  void resendSinceSendsOnlyWhatCameAfterTheTimestamp() throws Exception {
    new BashClient(agent).execute("command", "echo before");
    String since = java.time.Instant.now().toString();
    new BashClient(agent).execute("command", "echo after");
    try (WsClient ws =
        WsClient.connect(
            agent,
            PATH + "?resend_mode=since&after_timestamp=" + since,
            "X-Session-API-Key",
            AgentFixture.KEY)) {
      assertThat(stdout(untilExit(ws))).isEqualTo("after\n");
    }
  }

  @Test
  void aBadKeyOrABadFirstMessageClosesWith4001() throws Exception {
    try (WsClient ws = WsClient.connect(agent, PATH + "?session_api_key=wrong")) {
      assertThat(ws.awaitClose()).isEqualTo(4001);
    }
    try (WsClient ws = WsClient.connect(agent, PATH, "X-Session-API-Key", "wrong")) {
      assertThat(ws.awaitClose()).isEqualTo(4001);
    }
    for (String first :
        List.of(
            "{\"type\":\"auth\",\"session_api_key\":\"wrong\"}",
            "{\"type\":\"auth\"}",
            "{\"command\":\"echo sneaky\"}",
            "not json")) {
      try (WsClient ws = WsClient.connect(agent, PATH)) {
        ws.send(first);
        assertThat(ws.awaitClose()).as(first).isEqualTo(4001);
      }
    }
    // Nothing ran for the unauthenticated client.
    assertThat(agent.get("/api/bash/bash_events/search").body()).doesNotContain("sneaky");
  }

  @Test
  void aClientThatNeverAuthenticatesIsClosedWith4001AfterTheWindow() throws Exception {
    try (WsClient ws = WsClient.connect(agent, PATH)) {
      // OpenHands' window is 10 s; the close must come, and not before the window.
      long start = System.nanoTime();
      assertThat(ws.awaitClose()).isEqualTo(4001);
      assertThat(System.nanoTime() - start).isGreaterThan(9_000_000_000L);
    }
  }

  @Test
  void anInvalidRequestFrameGetsABashErrorFrame() throws Exception {
    try (WsClient ws = WsClient.connect(agent, PATH, "X-Session-API-Key", AgentFixture.KEY)) {
      ws.send("{\"command\":\"echo x\",\"timout\":5}");
      Map<String, Object> error = ws.next(10);
      assertThat(error).containsEntry("kind", "BashError").containsKeys("code", "detail");
      assertThat((String) error.get("detail")).contains("timout");
      ws.send("[1,2]");
      assertThat(ws.next(10)).containsEntry("kind", "BashError");
    }
  }

  @Test
  void pastFiftyConnectionsTheNextIsToldToTryLater() throws Exception {
    List<WsClient> open = new ArrayList<>();
    try {
      for (int i = 0; i < 50; i++) {
        open.add(WsClient.connect(agent, PATH, "X-Session-API-Key", AgentFixture.KEY));
      }
      try (WsClient extra = WsClient.connect(agent, PATH, "X-Session-API-Key", AgentFixture.KEY)) {
        assertThat(extra.awaitClose()).isEqualTo(1013);
      }
    } finally {
      open.forEach(WsClient::close);
    }
  }
}
