package dev.paddock.agent.pty;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.agent.AgentFixture;
import java.time.Duration;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A browser-style client attached to a terminal over a real WebSocket. */
class TerminalWebSocketTest {
  @RegisterExtension final AgentFixture agent = new AgentFixture();

  private final TerminalClient terminals = new TerminalClient(agent);

  @Test
  void typedKeysAreEchoedAndRun() throws Exception {
    String id = terminals.create("{}");
    try (TerminalViewer viewer = TerminalViewer.attach(agent, id, "")) {
      viewer.type("echo hi-$((40+2))\r");

      String output = viewer.awaitOutput("hi-42\r\n");

      assertThat(output).contains("echo hi-$((40+2))");
      assertThat(viewer.controls.getFirst())
          .containsEntry("type", "connected")
          .containsEntry("id", id);
    }
  }

  @Test
  void resizeFrameChangesWhatSttySees() throws Exception {
    String id = terminals.create("{}");
    try (TerminalViewer viewer = TerminalViewer.attach(agent, id, "")) {
      viewer.control("{\"type\": \"resize\", \"cols\": 150, \"rows\": 50}");
      Awaitility.await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> terminals.info(id).get("cols").equals(150));
      viewer.type("stty size\r");

      viewer.awaitOutput("50 150\r\n");
    }
  }

  @Test
  void reattachReplaysTheScrollbackAndSinceGivesOnlyTheRest() throws Exception {
    String id = terminals.create("{}");
    long seen;
    try (TerminalViewer first = TerminalViewer.attach(agent, id, "")) {
      first.type("echo before-$((1+1))\r");
      first.awaitOutput("before-2\r\n");
      Awaitility.await().atMost(Duration.ofSeconds(5)).until(() -> first.output().endsWith("# "));
      seen = first.outputBytes();
    }
    terminals.type(id, "echo while-away-$((2+2))\r");
    terminals.awaitOutput(id, "while-away-4\r\n");

    try (TerminalViewer replay = TerminalViewer.attach(agent, id, "")) {
      replay.awaitOutput("while-away-4\r\n");
      assertThat(replay.output()).contains("before-2\r\n");
      assertThat(replay.controls.getFirst()).containsEntry("offset", 0);
    }
    try (TerminalViewer resumed = TerminalViewer.attach(agent, id, "?since=" + seen)) {
      String rest = resumed.awaitOutput("while-away-4\r\n");
      assertThat(rest).doesNotContain("before-2").startsWith("echo while-away");
      assertThat(resumed.controls.getFirst()).containsEntry("offset", (int) seen);
    }
  }

  @Test
  void twoViewersSeeTheSameOutput() throws Exception {
    String id = terminals.create("{}");
    try (TerminalViewer one = TerminalViewer.attach(agent, id, "");
        TerminalViewer two = TerminalViewer.attach(agent, id, "")) {
      Awaitility.await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> terminals.info(id).get("viewers").equals(2));
      one.type("echo from-one-$((3*3))\r");
      two.awaitOutput("from-one-9\r\n");
      two.type("echo from-two-$((4*4))\r");

      one.awaitOutput("from-two-16\r\n");
      Awaitility.await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> one.output().equals(two.output()));
    }
  }

  @Test
  void exitFrameCarriesTheExitCodeThenTheSocketCloses() throws Exception {
    String id = terminals.create("{}");
    try (TerminalViewer viewer = TerminalViewer.attach(agent, id, "")) {
      viewer.type("exit 3\r");

      Map<String, Object> exit = viewer.awaitControl("exit");

      assertThat(exit).containsEntry("exit_code", 3);
      assertThat(viewer.closed).succeedsWithin(Duration.ofSeconds(5)).isEqualTo(1000);
    }
  }

  @Test
  void signalFrameInterruptsTheForegroundProgram() throws Exception {
    String id = terminals.create("{}");
    try (TerminalViewer viewer = TerminalViewer.attach(agent, id, "")) {
      viewer.type("sleep 100\r");
      Awaitility.await()
          .atMost(Duration.ofSeconds(10))
          .until(
              () ->
                  ProcessHandle.current()
                      .descendants()
                      .anyMatch(p -> p.info().command().orElse("").endsWith("/sleep")));
      viewer.control("{\"type\": \"signal\", \"signal\": \"INT\"}");
      viewer.type("echo rc=$?\r");

      viewer.awaitOutput("rc=130\r\n");
    }
  }

  @Test
  void badControlFramesAreAnsweredInBand() throws Exception {
    String id = terminals.create("{}");
    try (TerminalViewer viewer = TerminalViewer.attach(agent, id, "")) {
      viewer.control("not json");
      viewer.control("{\"type\": \"resize\", \"cols\": 0, \"rows\": 10}");
      Awaitility.await()
          .atMost(Duration.ofSeconds(5))
          .until(
              () ->
                  viewer.controls.stream().filter(c -> "error".equals(c.get("type"))).count() == 2);
      viewer.type("echo still-$((5+5))\r");
      viewer.awaitOutput("still-10\r\n");
    }
  }

  @Test
  void attachNeedsTheKeyAndAKnownTerminal() throws Exception {
    String id = terminals.create("{}");
    assertThat(handshakeStatus(id, false)).isEqualTo(401);
    assertThat(handshakeStatus("unknown", true)).isEqualTo(404);
  }

  private int handshakeStatus(String id, boolean withKey) {
    var builder = agent.client().newWebSocketBuilder();
    if (withKey) {
      builder.header(dev.paddock.agent.AgentServer.SESSION_KEY_HEADER, AgentFixture.KEY);
    }
    var uri =
        java.net.URI.create(
            "ws://127.0.0.1:" + agent.server().port() + "/api/terminals/" + id + "/ws");
    try {
      builder
          .buildAsync(uri, new java.net.http.WebSocket.Listener() {})
          .get(10, java.util.concurrent.TimeUnit.SECONDS);
      throw new AssertionError("the handshake was accepted");
    } catch (java.util.concurrent.ExecutionException e) {
      assertThat(e.getCause()).isInstanceOf(java.net.http.WebSocketHandshakeException.class);
      return ((java.net.http.WebSocketHandshakeException) e.getCause()).getResponse().statusCode();
    } catch (Exception e) {
      throw new AssertionError(e);
    }
  }
}
