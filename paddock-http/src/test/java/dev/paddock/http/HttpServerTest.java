package dev.paddock.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** HTTP/1.1 semantics of the server over real sockets: keep-alive, framing, HEAD, 100-continue. */
class HttpServerTest {
  private TestServer server;
  private final HttpClient client = HttpClient.newHttpClient();

  @BeforeEach
  void start() throws IOException {
    server = new TestServer();
  }

  @AfterEach
  void stop() {
    server.close();
    client.close();
  }

  @Test
  void portZeroBindsAFreePortThatGetAddressNames() {
    assertThat(server.server().getAddress().getPort()).isPositive();
  }

  @Test
  void keepAliveServesManyRequestsOnOneConnection() throws IOException {
    try (RawClient raw = new RawClient(server.port())) {
      for (int i = 0; i < 20; i++) {
        RawClient.Response response = raw.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n").read();
        assertThat(response.status()).isEqualTo(200);
        assertThat(response.body()).isEqualTo("{\"hello\":\"world\"}");
        assertThat(response.header("Connection")).isNull();
      }
    }
  }

  @Test
  void pipelinedRequestsAreAnsweredInOrder() throws IOException {
    try (RawClient raw = new RawClient(server.port())) {
      raw.send(
          "POST /upload HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc"
              + "GET /query?id=2 HTTP/1.1\r\n\r\n"
              + "GET /query?id=3 HTTP/1.1\r\n\r\n");
      assertThat(raw.read().body()).isEqualTo("{\"received\":3}");
      assertThat(raw.read().body()).isEqualTo("{\"id\":\"2\"}");
      assertThat(raw.read().body()).isEqualTo("{\"id\":\"3\"}");
    }
  }

  @Test
  void connectionCloseAndHttp10CloseAfterTheReply() throws IOException {
    try (RawClient raw = new RawClient(server.port())) {
      RawClient.Response response =
          raw.send("GET /hello HTTP/1.1\r\nConnection: close\r\n\r\n").read();
      assertThat(response.header("Connection")).isEqualTo("close");
      assertThat(raw.closedByServer()).isTrue();
    }
    try (RawClient raw = new RawClient(server.port())) {
      RawClient.Response response = raw.send("GET /stream HTTP/1.0\r\n\r\n").read();
      assertThat(response.header("Transfer-Encoding")).as("no chunking for 1.0").isNull();
      assertThat(response.body()).isEqualTo("{\"n\":0}\n{\"n\":1}\n{\"n\":2}\n");
    }
  }

  @Test
  void chunkedRequestBodiesAreDecodedAndBoundedToTheBody() throws IOException {
    try (RawClient raw = new RawClient(server.port())) {
      raw.send(
          "POST /upload HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
              + "5;ext=1\r\nhello\r\n1a\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nTrailer: t\r\n\r\n"
              + "GET /hello HTTP/1.1\r\n\r\n");
      assertThat(raw.read().body()).isEqualTo("{\"received\":31}");
      assertThat(raw.read().status()).as("next request on the same connection").isEqualTo(200);
    }
  }

  @Test
  void chunkedResponsesStreamWithTheJdkClient() throws Exception {
    HttpResponse<String> response =
        client.send(
            HttpRequest.newBuilder(server.uri("/stream?lines=5000")).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(response.headers().firstValue("Transfer-Encoding")).hasValue("chunked");
    assertThat(response.body().lines()).hasSize(5000).endsWith("{\"n\":4999}");
  }

  @Test
  void largeUploadsStreamThroughWithTheJdkClient() throws Exception {
    byte[] body = new byte[20 << 20];
    HttpResponse<String> response =
        client.send(
            HttpRequest.newBuilder(server.uri("/upload"))
                .POST(HttpRequest.BodyPublishers.ofByteArray(body))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(response.body()).isEqualTo("{\"received\":" + body.length + "}");
  }

  @Test
  void headAnswersAGetRouteWithItsHeadersAndNoBody() throws IOException {
    try (RawClient raw = new RawClient(server.port())) {
      RawClient.Response get = raw.send("GET /hello HTTP/1.1\r\n\r\n").read();
      RawClient.Response head = raw.send("HEAD /hello HTTP/1.1\r\n\r\n").read(true);
      assertThat(head.status()).isEqualTo(200);
      assertThat(head.header("Content-Length")).isEqualTo(get.header("Content-Length"));
      assertThat(head.header("Content-Type")).isEqualTo("application/json");
      RawClient.Response stream = raw.send("HEAD /stream HTTP/1.1\r\n\r\n").read(true);
      assertThat(stream.header("Transfer-Encoding")).isEqualTo("chunked");
      RawClient.Response after = raw.send("GET /hello HTTP/1.1\r\n\r\n").read();
      assertThat(after.body()).as("no body bytes were left on the wire").contains("world");
    }
  }

  @Test
  void headOfAMissingRouteIs404WithoutABody() throws IOException {
    try (RawClient raw = new RawClient(server.port())) {
      RawClient.Response head = raw.send("HEAD /nope HTTP/1.1\r\n\r\n").read(true);
      assertThat(head.status()).isEqualTo(404);
      assertThat(raw.send("GET /hello HTTP/1.1\r\n\r\n").read().status()).isEqualTo(200);
    }
  }

  @Test
  void expectContinueIsAnsweredWhenTheRouteReadsTheBody() throws IOException {
    try (RawClient raw = new RawClient(server.port())) {
      raw.send("POST /upload HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n");
      assertThat(raw.read(true).status()).isEqualTo(100);
      RawClient.Response response = raw.send("data").read();
      assertThat(response.body()).isEqualTo("{\"received\":4}");
    }
  }

  @Test
  void expectContinueIsNotAnsweredWhenTheRouteRefusesFirst() throws IOException {
    try (RawClient raw = new RawClient(server.port())) {
      raw.send("POST /json HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 5000\r\n\r\n");
      RawClient.Response response = raw.read();
      assertThat(response.status()).as("the refusal, no 100 first").isEqualTo(413);
      assertThat(raw.closedByServer()).isTrue();
    }
  }

  @Test
  void theJdkClientsExpectContinueWorks() throws Exception {
    HttpResponse<String> response =
        client.send(
            HttpRequest.newBuilder(server.uri("/upload"))
                .expectContinue(true)
                .POST(HttpRequest.BodyPublishers.ofString("0123456789"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(response.body()).isEqualTo("{\"received\":10}");
  }

  @Test
  void anUnreadBodyIsDrainedSoTheConnectionStaysUsable() throws IOException {
    try (RawClient raw = new RawClient(server.port())) {
      raw.send("POST /hello HTTP/1.1\r\nContent-Length: 100000\r\n\r\n" + "x".repeat(100000));
      assertThat(raw.read().status()).isEqualTo(405);
      assertThat(raw.send("GET /hello HTTP/1.1\r\n\r\n").read().status()).isEqualTo(200);
    }
  }

  @Test
  void aHandlerThatThrowsGets500JsonAndTheServerKeepsServing() throws Exception {
    server
        .server()
        .createContext(
            "/raw",
            exchange -> {
              throw new IllegalStateException("boom");
            });
    try (RawClient raw = new RawClient(server.port())) {
      RawClient.Response response = raw.send("GET /raw HTTP/1.1\r\n\r\n").read();
      assertThat(response.status()).isEqualTo(500);
      assertThat(response.body()).startsWith("{\"detail\":");
    }
    assertThat(
            client
                .send(
                    HttpRequest.newBuilder(server.uri("/hello")).build(),
                    HttpResponse.BodyHandlers.ofString())
                .statusCode())
        .isEqualTo(200);
  }

  @Test
  void stopWaitsForARunningExchangeUpToItsDelay() throws Exception {
    CountDownLatch inside = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    server
        .server()
        .createContext(
            "/slow",
            exchange -> {
              inside.countDown();
              try {
                release.await(10, TimeUnit.SECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
              byte[] body = "done".getBytes(StandardCharsets.UTF_8);
              exchange.sendResponseHeaders(200, body.length);
              exchange.getResponseBody().write(body);
              exchange.close();
            });
    var pending =
        client.sendAsync(
            HttpRequest.newBuilder(server.uri("/slow")).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(inside.await(5, TimeUnit.SECONDS)).isTrue();
    Thread.ofVirtual().start(release::countDown);
    server.server().stop(5);
    assertThat(pending.get(5, TimeUnit.SECONDS).body()).isEqualTo("done");
  }

  @Test
  void aClientThatStopsReadingIsCutOffByTheWriteTimeout() throws Exception {
    try (TestServer slow = new TestServer(b -> b.writeTimeout(Duration.ofMillis(300)));
        RawClient raw = new RawClient(slow.port(), 10_000)) {
      raw.send("GET /big?mib=256 HTTP/1.1\r\n\r\n");
      // Read nothing until the server must have given up (its write blocked > 300 ms).
      org.awaitility.Awaitility.await()
          .pollDelay(Duration.ofMillis(1500))
          .atMost(Duration.ofSeconds(5))
          .until(() -> true);
      long started = System.nanoTime();
      long total = 0;
      try {
        byte[] buffer = new byte[1 << 16];
        int n;
        while ((n = raw.in.read(buffer)) >= 0) {
          total += n;
        }
      } catch (java.net.SocketException e) {
        // a reset is also a cut-off
      }
      assertThat(total).as("the 256 MiB reply was cut short").isLessThan(256L << 20);
      assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
    }
  }
}
