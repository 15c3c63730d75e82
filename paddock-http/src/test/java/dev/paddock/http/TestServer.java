package dev.paddock.http;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * A real {@link HttpServers} server on a free loopback port with short timeouts and a few routes
 * that exercise the layer: echo, upload (counts bytes), stream (chunked), WebSocket echo, and a
 * protected prefix {@code /api/} that needs {@code X-Key: secret}.
 */
final class TestServer implements AutoCloseable {
  static final Duration SHORT = Duration.ofMillis(700);

  private final HttpServer server;
  final Router router;

  TestServer(UnaryOperator<HttpServerConfig.Builder> settings, Router router) throws IOException {
    this.router = router;
    HttpServerConfig config =
        settings
            .apply(
                HttpServerConfig.builder(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                    .headerTimeout(SHORT)
                    .bodyIdleTimeout(SHORT)
                    .idleTimeout(Duration.ofSeconds(5))
                    .writeTimeout(Duration.ofSeconds(2))
                    .maxHeaderBytes(16 << 10)
                    .maxHeaderLineBytes(4 << 10)
                    .maxHeaderCount(50)
                    .maxUriLength(2048)
                    .maxDrainBytes(16 << 20)
                    .webSocketMaxMessageBytes(1 << 20))
            .build();
    server = HttpServers.create(config);
    server.createContext("/", router);
    server.start();
  }

  TestServer() throws IOException {
    this(b -> b, standardRouter());
  }

  TestServer(UnaryOperator<HttpServerConfig.Builder> settings) throws IOException {
    this(settings, standardRouter());
  }

  static Router standardRouter() {
    return Router.builder()
        .maxJsonBytes(1024)
        .protect(
            java.util.List.of("/api/"),
            call -> call.header("X-Key").map("secret"::equals).orElse(false),
            "missing or invalid X-Key")
        .build()
        .add("GET", "/hello", call -> call.sendJson(200, Map.of("hello", "world")))
        .add("GET", "/api/hello", call -> call.sendJson(200, Map.of("hello", "api")))
        .add("GET", "/query", call -> call.sendJson(200, Map.of("id", call.query("id").orElse(""))))
        .add("GET", "/labels", call -> call.sendJson(200, Map.of("label", call.queryAll("label"))))
        .add("POST", "/json", call -> call.sendJson(200, Map.of("size", call.smallBody().length)))
        .add("POST", "/upload", TestServer::upload)
        .add("GET", "/stream", TestServer::stream)
        .websocket("/ws/echo", call -> new Echo())
        .websocket("/api/ws", call -> new Echo())
        .websocket(
            "/ws/refuse",
            call -> {
              throw HttpError.conflict("not now");
            });
  }

  private static void upload(Call call) throws IOException {
    long total = 0;
    try (InputStream in = call.body()) {
      byte[] buffer = new byte[8192];
      int n;
      while ((n = in.read(buffer)) >= 0) {
        total += n;
      }
    }
    call.sendJson(200, Map.of("received", total));
  }

  private static void stream(Call call) throws IOException {
    int lines = call.queryInt("lines", 0, 100_000).orElse(3);
    try (OutputStream out = call.stream(200, "application/x-ndjson", -1)) {
      for (int i = 0; i < lines; i++) {
        out.write(("{\"n\":" + i + "}\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
      }
    }
  }

  /** Echoes text and binary messages; "close" closes with 4000. */
  static final class Echo implements WebSocketListener {
    @Override
    public void onText(WebSocket socket, String text) {
      try {
        if (text.equals("close")) {
          socket.close(4000, "asked to");
        } else {
          socket.sendText(text);
        }
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }

    @Override
    public void onBinary(WebSocket socket, byte[] data) {
      try {
        socket.sendBinary(data, 0, data.length);
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
  }

  int port() {
    return server.getAddress().getPort();
  }

  URI uri(String path) {
    return URI.create("http://127.0.0.1:" + port() + path);
  }

  URI ws(String path) {
    return URI.create("ws://127.0.0.1:" + port() + path);
  }

  HttpServer server() {
    return server;
  }

  @Override
  public void close() {
    server.stop(0);
  }
}
