package dev.paddock.agent.pty;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.agent.AgentFixture;
import dev.paddock.agent.AgentServer;
import dev.paddock.http.Json;
import java.io.ByteArrayOutputStream;
import java.net.URI;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;

/**
 * A browser-style terminal client over the JDK WebSocket client: collects binary output and JSON
 * control frames, and types binary input.
 */
final class TerminalViewer implements WebSocket.Listener, AutoCloseable {
  private final ByteArrayOutputStream output = new ByteArrayOutputStream();
  final List<Map<String, Object>> controls = new CopyOnWriteArrayList<>();
  final CompletableFuture<Integer> closed = new CompletableFuture<>();
  private final StringBuilder text = new StringBuilder();
  private WebSocket socket;

  static TerminalViewer attach(AgentFixture agent, String id, String query) throws Exception {
    TerminalViewer viewer = new TerminalViewer();
    URI uri =
        URI.create(
            "ws://127.0.0.1:" + agent.server().port() + "/api/terminals/" + id + "/ws" + query);
    viewer.socket =
        agent
            .client()
            .newWebSocketBuilder()
            .header(AgentServer.SESSION_KEY_HEADER, AgentFixture.KEY)
            .connectTimeout(Duration.ofSeconds(5))
            .buildAsync(uri, viewer)
            .get(10, TimeUnit.SECONDS);
    viewer.awaitControl("connected");
    return viewer;
  }

  @Override
  public CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
    byte[] bytes = new byte[data.remaining()];
    data.get(bytes);
    synchronized (output) {
      output.writeBytes(bytes);
    }
    webSocket.request(1);
    return null;
  }

  @Override
  public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
    text.append(data);
    if (last) {
      controls.add(Json.parseObject(text.toString().getBytes(StandardCharsets.UTF_8)));
      text.setLength(0);
    }
    webSocket.request(1);
    return null;
  }

  @Override
  public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
    closed.complete(statusCode);
    return null;
  }

  @Override
  public void onError(WebSocket webSocket, Throwable error) {
    closed.completeExceptionally(error);
  }

  String output() {
    synchronized (output) {
      return output.toString(StandardCharsets.UTF_8);
    }
  }

  int outputBytes() {
    synchronized (output) {
      return output.size();
    }
  }

  String awaitOutput(String expected) {
    return Awaitility.await("viewer output containing " + expected)
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(10))
        .until(this::output, out -> out.contains(expected));
  }

  Map<String, Object> awaitControl(String type) {
    return Awaitility.await("a '" + type + "' frame")
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(10))
        .until(
            () -> controls.stream().filter(c -> type.equals(c.get("type"))).findFirst(),
            java.util.Optional::isPresent)
        .orElseThrow();
  }

  void type(String keys) throws Exception {
    socket
        .sendBinary(ByteBuffer.wrap(keys.getBytes(StandardCharsets.UTF_8)), true)
        .get(5, TimeUnit.SECONDS);
  }

  void control(String json) throws Exception {
    socket.sendText(json, true).get(5, TimeUnit.SECONDS);
  }

  @Override
  public void close() throws java.io.IOException {
    if (!socket.isOutputClosed()) {
      socket.sendClose(WebSocket.NORMAL_CLOSURE, "bye").orTimeout(5, TimeUnit.SECONDS).join();
    }
    assertThat(closed).succeedsWithin(Duration.ofSeconds(5));
  }
}
