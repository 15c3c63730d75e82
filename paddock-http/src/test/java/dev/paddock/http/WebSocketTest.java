package dev.paddock.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.net.http.WebSocketHandshakeException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** RFC 6455 on the server, driven by the JDK's WebSocket client and by raw frames. */
class WebSocketTest {
  private TestServer server;
  private final HttpClient client = HttpClient.newHttpClient();
  private final List<String> closes = new CopyOnWriteArrayList<>();

  @BeforeEach
  void start() throws IOException {
    Router router =
        TestServer.standardRouter()
            .websocket(
                "/ws/recorded",
                call ->
                    new WebSocketListener() {
                      @Override
                      public void onClose(dev.paddock.http.WebSocket s, int code, String reason) {
                        closes.add(code + " " + reason);
                      }
                    })
            .websocket(
                "/ws/push/{count}",
                call -> {
                  int count = Integer.parseInt(call.pathParam("count"));
                  return new WebSocketListener() {
                    @Override
                    public void onOpen(dev.paddock.http.WebSocket socket) {
                      // Sends from other threads at once: frames must never interleave.
                      for (int t = 0; t < 4; t++) {
                        int thread = t;
                        Thread.ofVirtual()
                            .start(
                                () -> {
                                  for (int i = 0; i < count; i++) {
                                    try {
                                      socket.sendText(thread + ":" + i + ":" + "x".repeat(3000));
                                    } catch (IOException e) {
                                      return;
                                    }
                                  }
                                });
                      }
                    }
                  };
                });
    server = new TestServer(b -> b.webSocketPingInterval(Duration.ofMillis(500)), router);
  }

  @AfterEach
  void stop() {
    server.close();
    client.close();
  }

  /** Collects what the JDK client receives. */
  static final class Received implements WebSocket.Listener {
    final List<String> texts = new CopyOnWriteArrayList<>();
    final List<byte[]> binaries = new CopyOnWriteArrayList<>();
    final List<String> pongs = new CopyOnWriteArrayList<>();
    final CompletableFuture<String> closed = new CompletableFuture<>();
    private final StringBuilder text = new StringBuilder();
    private final java.io.ByteArrayOutputStream binary = new java.io.ByteArrayOutputStream();

    @Override
    public CompletionStage<?> onText(WebSocket ws, CharSequence data, boolean last) {
      text.append(data);
      if (last) {
        texts.add(text.toString());
        text.setLength(0);
      }
      ws.request(1);
      return null;
    }

    @Override
    public CompletionStage<?> onBinary(WebSocket ws, ByteBuffer data, boolean last) {
      byte[] bytes = new byte[data.remaining()];
      data.get(bytes);
      binary.writeBytes(bytes);
      if (last) {
        binaries.add(binary.toByteArray());
        binary.reset();
      }
      ws.request(1);
      return null;
    }

    @Override
    public CompletionStage<?> onPong(WebSocket ws, ByteBuffer message) {
      pongs.add(StandardCharsets.UTF_8.decode(message).toString());
      ws.request(1);
      return null;
    }

    @Override
    public CompletionStage<?> onClose(WebSocket ws, int code, String reason) {
      closed.complete(code + " " + reason);
      return null;
    }

    @Override
    public void onError(WebSocket ws, Throwable error) {
      closed.complete("error " + error);
    }
  }

  private WebSocket connect(String path, Received received) throws Exception {
    return client
        .newWebSocketBuilder()
        .buildAsync(server.ws(path), received)
        .get(5, TimeUnit.SECONDS);
  }

  @Test
  void textAndBinaryMessagesAreEchoed() throws Exception {
    Received received = new Received();
    WebSocket ws = connect("/ws/echo", received);
    ws.sendText("héllo wörld ✓", true).get(5, TimeUnit.SECONDS);
    byte[] payload = new byte[70_000];
    for (int i = 0; i < payload.length; i++) {
      payload[i] = (byte) i;
    }
    ws.sendBinary(ByteBuffer.wrap(payload), true).get(5, TimeUnit.SECONDS);
    await().atMost(Duration.ofSeconds(5)).until(() -> received.binaries.size() == 1);
    assertThat(received.texts).containsExactly("héllo wörld ✓");
    assertThat(received.binaries.get(0)).isEqualTo(payload);
    ws.sendClose(1000, "bye").get(5, TimeUnit.SECONDS);
    assertThat(received.closed.get(5, TimeUnit.SECONDS)).isEqualTo("1000 bye");
  }

  @Test
  void fragmentedMessagesAreJoinedBeforeDelivery() throws Exception {
    Received received = new Received();
    WebSocket ws = connect("/ws/echo", received);
    ws.sendText("one ", false).get(5, TimeUnit.SECONDS);
    ws.sendPing(ByteBuffer.wrap("between".getBytes(StandardCharsets.UTF_8)))
        .get(5, TimeUnit.SECONDS);
    ws.sendText("two ", false).get(5, TimeUnit.SECONDS);
    ws.sendText("three", true).get(5, TimeUnit.SECONDS);
    await().atMost(Duration.ofSeconds(5)).until(() -> received.texts.size() == 1);
    assertThat(received.texts).containsExactly("one two three");
    assertThat(received.pongs).containsExactly("between");
    ws.abort();
  }

  @Test
  void theServerClosesWithTheListenersCode() throws Exception {
    Received received = new Received();
    WebSocket ws = connect("/ws/echo", received);
    ws.sendText("close", true).get(5, TimeUnit.SECONDS);
    assertThat(received.closed.get(5, TimeUnit.SECONDS)).isEqualTo("4000 asked to");
  }

  @Test
  void aMessageOverTheLimitClosesWith1009() throws Exception {
    Received received = new Received();
    WebSocket ws = connect("/ws/echo", received);
    ws.sendBinary(ByteBuffer.wrap(new byte[(1 << 20) + 1]), true);
    assertThat(received.closed.get(5, TimeUnit.SECONDS)).startsWith("1009");
  }

  @Test
  void concurrentSendsNeverInterleaveFrames() throws Exception {
    Received received = new Received();
    connect("/ws/push/200", received);
    await().atMost(Duration.ofSeconds(10)).until(() -> received.texts.size() == 800);
    for (int t = 0; t < 4; t++) {
      String prefix = t + ":";
      List<String> mine = new ArrayList<>();
      for (String text : received.texts) {
        assertThat(text).matches("\\d:\\d+:x{3000}");
        if (text.startsWith(prefix)) {
          mine.add(text.split(":")[1]);
        }
      }
      List<String> expected = new ArrayList<>();
      for (int i = 0; i < 200; i++) {
        expected.add(Integer.toString(i));
      }
      assertThat(mine).as("thread %d's messages in order", t).isEqualTo(expected);
    }
  }

  @Test
  void aRouteRefusesTheUpgradeWithItsStatusAndDetail() throws Exception {
    assertThatThrownBy(() -> connect("/ws/refuse", new Received()))
        .isInstanceOf(ExecutionException.class)
        .cause()
        .isInstanceOfSatisfying(
            WebSocketHandshakeException.class,
            e -> {
              assertThat(e.getResponse().statusCode()).isEqualTo(409);
              assertThat(e.getResponse().body().toString()).contains("not now");
            });
  }

  @Test
  void aPlainGetOnAWebSocketRouteIs426Json() throws Exception {
    HttpResponse<String> response =
        client.send(
            HttpRequest.newBuilder(server.uri("/ws/echo")).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(426);
    assertThat(response.headers().firstValue("Upgrade")).hasValue("websocket");
    assertThat(response.body()).contains("\"detail\"");
  }

  @Test
  void protectedWebSocketRoutesNeedAuthBeforeTheUpgrade() throws Exception {
    assertThatThrownBy(() -> connect("/api/ws", new Received()))
        .cause()
        .isInstanceOfSatisfying(
            WebSocketHandshakeException.class,
            e -> assertThat(e.getResponse().statusCode()).isEqualTo(401));
    Received received = new Received();
    WebSocket ws =
        client
            .newWebSocketBuilder()
            .header("X-Key", "secret")
            .buildAsync(server.ws("/api/ws"), received)
            .get(5, TimeUnit.SECONDS);
    ws.sendText("in", true).get(5, TimeUnit.SECONDS);
    await().atMost(Duration.ofSeconds(5)).until(() -> received.texts.equals(List.of("in")));
    ws.abort();
  }

  @Test
  void anUnmaskedClientFrameIsClosedWith1002() throws Exception {
    try (RawWebSocket raw = RawWebSocket.open(server.port(), "/ws/echo")) {
      raw.sendFrame(0x81, false, "hi".getBytes(StandardCharsets.UTF_8));
      assertThat(raw.readCloseCode()).isEqualTo(1002);
    }
  }

  @Test
  void invalidUtf8TextIsClosedWith1007() throws Exception {
    try (RawWebSocket raw = RawWebSocket.open(server.port(), "/ws/echo")) {
      raw.sendFrame(0x81, true, new byte[] {(byte) 0xc3, (byte) 0x28});
      assertThat(raw.readCloseCode()).isEqualTo(1007);
    }
  }

  @Test
  void aContinuationWithoutAMessageIsClosedWith1002() throws Exception {
    try (RawWebSocket raw = RawWebSocket.open(server.port(), "/ws/echo")) {
      raw.sendFrame(0x80, true, "x".getBytes(StandardCharsets.UTF_8));
      assertThat(raw.readCloseCode()).isEqualTo(1002);
    }
  }

  @Test
  void aSilentPeerIsPingedThenDroppedAndReported1006Once() throws Exception {
    try (RawWebSocket raw = RawWebSocket.open(server.port(), "/ws/recorded")) {
      RawWebSocket.Frame ping = raw.readFrame();
      assertThat(ping.opcode()).as("server pings a silent peer").isEqualTo(0x9);
      await().atMost(Duration.ofSeconds(5)).until(() -> !closes.isEmpty());
      assertThat(raw.endOfStream()).isTrue();
    }
    assertThat(closes).hasSize(1);
    assertThat(closes.get(0)).startsWith("1006");
  }

  @Test
  void aPeerThatVanishesIsReported1006ExactlyOnce() throws Exception {
    RawWebSocket raw = RawWebSocket.open(server.port(), "/ws/recorded");
    raw.close();
    await().atMost(Duration.ofSeconds(5)).until(() -> !closes.isEmpty());
    assertThat(Collections.unmodifiableList(closes)).containsExactly("1006 connection lost");
  }

  @Test
  void aCleanCloseFromThePeerIsEchoedAndReported() throws Exception {
    try (RawWebSocket raw = RawWebSocket.open(server.port(), "/ws/recorded")) {
      raw.sendFrame(0x88, true, new byte[] {0x03, (byte) 0xe8, 'o', 'k'});
      assertThat(raw.readCloseCode()).isEqualTo(1000);
      assertThat(raw.endOfStream()).isTrue();
    }
    await().atMost(Duration.ofSeconds(5)).until(() -> closes.equals(List.of("1000 ok")));
  }

  @Test
  void stoppingTheServerClosesWebSocketsWith1001() throws Exception {
    Received received = new Received();
    connect("/ws/echo", received);
    server.server().stop(0);
    assertThat(received.closed.get(5, TimeUnit.SECONDS)).startsWith("1001");
  }
}
