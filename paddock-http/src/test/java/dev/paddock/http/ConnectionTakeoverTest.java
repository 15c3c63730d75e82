package dev.paddock.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A handler that takes its connection over relays raw bytes, read-ahead bytes included. */
class ConnectionTakeoverTest {
  private HttpServer server;

  @BeforeEach
  void start() throws Exception {
    server =
        HttpServers.create(
            HttpServerConfig.builder(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .idleTimeout(Duration.ofMillis(300))
                .build());
    server.createContext(
        "/",
        exchange -> {
          if (exchange.getRequestURI().getPath().equals("/raw")) {
            HttpServers.takeOver(exchange, ConnectionTakeoverTest::shout);
          } else {
            exchange.sendResponseHeaders(204, -1);
          }
          exchange.close();
        });
    server.start();
  }

  @AfterEach
  void stop() {
    server.stop(0);
  }

  /** Answers a 101 of its own, then sends back every byte upper-cased until the client ends. */
  private static void shout(InputStream in, OutputStream out) throws java.io.IOException {
    out.write(
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: shout\r\n\r\n"
            .getBytes(StandardCharsets.US_ASCII));
    out.flush();
    int b;
    while ((b = in.read()) >= 0) {
      out.write(Character.toUpperCase(b));
      out.flush();
    }
  }

  @Test
  void takenOverConnectionRelaysBytesSentWithTheRequestAndAfterIt() throws Exception {
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port())) {
      socket.setSoTimeout(5000);
      OutputStream out = socket.getOutputStream();
      // The first payload bytes travel in the same write as the head: the server has read them
      // ahead into its buffer, and the taker must still see them first.
      out.write("GET /raw HTTP/1.1\r\nHost: x\r\n\r\nabc".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      InputStream in = socket.getInputStream();
      String head = readUntil(in, "\r\n\r\n");
      assertThat(head).startsWith("HTTP/1.1 101 Switching Protocols").contains("Upgrade: shout");
      assertThat(new String(in.readNBytes(3), StandardCharsets.US_ASCII)).isEqualTo("ABC");
      // Longer than the idle timeout: a taken-over connection has no HTTP timeouts.
      Thread.sleep(600); // not synchronisation: the pause is the behaviour under test
      out.write("xyz".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      assertThat(new String(in.readNBytes(3), StandardCharsets.US_ASCII)).isEqualTo("XYZ");
      socket.shutdownOutput();
      assertThat(in.read()).isEqualTo(-1);
    }
  }

  @Test
  void takeOverRefusesAnExchangeThatAlreadyAnswered() throws Exception {
    server.removeContext("/");
    java.util.concurrent.CompletableFuture<Throwable> failure =
        new java.util.concurrent.CompletableFuture<>();
    server.createContext(
        "/",
        exchange -> {
          exchange.sendResponseHeaders(204, -1);
          try {
            HttpServers.takeOver(exchange, (in, out) -> {});
            failure.complete(null);
          } catch (RuntimeException e) {
            failure.complete(e);
          }
          exchange.close();
        });
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port())) {
      socket
          .getOutputStream()
          .write("GET /x HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      assertThat(readUntil(socket.getInputStream(), "\r\n\r\n")).startsWith("HTTP/1.1 204");
    }
    assertThat(failure.get(5, java.util.concurrent.TimeUnit.SECONDS))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("already sent");
  }

  @Test
  void takeOverNeedsAnExchangeOfThisServer() {
    assertThatThrownBy(() -> HttpServers.takeOver(new FakeExchange(), (in, out) -> {}))
        .isInstanceOf(IllegalArgumentException.class);
  }

  private int port() {
    return server.getAddress().getPort();
  }

  private static String readUntil(InputStream in, String end) throws java.io.IOException {
    StringBuilder text = new StringBuilder();
    while (!text.toString().endsWith(end)) {
      int b = in.read();
      if (b < 0) {
        break;
      }
      text.append((char) b);
    }
    return text.toString();
  }

  /** An exchange of some other server. */
  private static final class FakeExchange extends com.sun.net.httpserver.HttpExchange {
    @Override
    public com.sun.net.httpserver.Headers getRequestHeaders() {
      return new com.sun.net.httpserver.Headers();
    }

    @Override
    public com.sun.net.httpserver.Headers getResponseHeaders() {
      return new com.sun.net.httpserver.Headers();
    }

    @Override
    public java.net.URI getRequestURI() {
      return java.net.URI.create("/");
    }

    @Override
    public String getRequestMethod() {
      return "GET";
    }

    @Override
    public com.sun.net.httpserver.HttpContext getHttpContext() {
      return null;
    }

    @Override
    public void close() {}

    @Override
    public InputStream getRequestBody() {
      return InputStream.nullInputStream();
    }

    @Override
    public OutputStream getResponseBody() {
      return OutputStream.nullOutputStream();
    }

    @Override
    public void sendResponseHeaders(int code, long length) {}

    @Override
    public InetSocketAddress getRemoteAddress() {
      return null;
    }

    @Override
    public int getResponseCode() {
      return -1;
    }

    @Override
    public InetSocketAddress getLocalAddress() {
      return null;
    }

    @Override
    public String getProtocol() {
      return "HTTP/1.1";
    }

    @Override
    public Object getAttribute(String name) {
      return null;
    }

    @Override
    public void setAttribute(String name, Object value) {}

    @Override
    public void setStreams(InputStream in, OutputStream out) {}

    @Override
    public com.sun.net.httpserver.HttpPrincipal getPrincipal() {
      return null;
    }
  }
}
