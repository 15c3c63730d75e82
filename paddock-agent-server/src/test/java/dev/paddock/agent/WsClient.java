package dev.paddock.agent;

import dev.paddock.http.Json;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.WebSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A WebSocket client as an OpenHands client uses one ({@code java.net.http}), over a real socket:
 * collects whole text messages and the close code.
 */
final class WsClient implements WebSocket.Listener, AutoCloseable {
  private final BlockingQueue<String> messages = new LinkedBlockingQueue<>();
  private final StringBuilder partial = new StringBuilder();
  final CompletableFuture<Integer> closeCode = new CompletableFuture<>();
  private WebSocket socket;

  static WsClient connect(AgentFixture agent, String pathAndQuery, String... headers)
      throws Exception {
    WsClient client = new WsClient();
    WebSocket.Builder builder =
        HttpClient.newHttpClient().newWebSocketBuilder().connectTimeout(Duration.ofSeconds(5));
    for (int i = 0; i < headers.length; i += 2) {
      builder.header(headers[i], headers[i + 1]);
    }
    URI uri = URI.create("ws://127.0.0.1:" + agent.server().port() + pathAndQuery);
    client.socket = builder.buildAsync(uri, client).get(10, TimeUnit.SECONDS);
    return client;
  }

  void send(String text) throws Exception {
    socket.sendText(text, true).get(10, TimeUnit.SECONDS);
  }

  void auth(String key) throws Exception {
    send(Json.string(Map.of("type", "auth", "session_api_key", key)));
  }

  /** The next whole message as a JSON object; fails after {@code seconds}. */
  @SuppressWarnings("unchecked")
  Map<String, Object> next(int seconds) throws Exception {
    String text = messages.poll(seconds, TimeUnit.SECONDS);
    if (text == null) {
      throw new AssertionError("no message within " + seconds + " s");
    }
    return (Map<String, Object>) Json.parseAny(text.getBytes(StandardCharsets.UTF_8));
  }

  int awaitClose() throws Exception {
    return closeCode.get(20, TimeUnit.SECONDS);
  }

  @Override
  public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
    partial.append(data);
    if (last) {
      messages.add(partial.toString());
      partial.setLength(0);
    }
    webSocket.request(1);
    return null;
  }

  @Override
  public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
    closeCode.complete(statusCode);
    return null;
  }

  @Override
  public void onError(WebSocket webSocket, Throwable error) {
    closeCode.complete(1006);
  }

  @Override
  public void close() {
    if (!socket.isOutputClosed()) {
      socket.sendClose(WebSocket.NORMAL_CLOSURE, "bye");
    }
    socket.abort();
  }
}
