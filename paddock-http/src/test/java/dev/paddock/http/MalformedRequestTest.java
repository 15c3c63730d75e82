package dev.paddock.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Every client mistake of the hardening probe (D7, D12, D13, D14) gets a JSON 4xx/5xx within the
 * configured timeout (700 ms here), or a close after it: never a hang, never HTML.
 */
class MalformedRequestTest {
  private TestServer server;

  @BeforeEach
  void start() throws IOException {
    server = new TestServer();
  }

  @AfterEach
  void stop() {
    server.close();
  }

  /** Sends {@code request} and expects {@code status} with a JSON detail, then a close. */
  private String refused(String request, int status) throws IOException {
    return refused(request.getBytes(StandardCharsets.ISO_8859_1), status);
  }

  private String refused(byte[] request, int status) throws IOException {
    try (RawClient raw = new RawClient(server.port(), 5000)) {
      raw.send(request);
      RawClient.Response response = raw.read();
      assertThat(response.status()).as(response.toString()).isEqualTo(status);
      assertThat(response.header("Content-Type")).isEqualTo("application/json");
      assertThat(response.body()).startsWith("{\"detail\":");
      assertThat(raw.closedByServer()).as("connection closed after a framing error").isTrue();
      return response.body();
    }
  }

  @Test
  void bareLfLinesAre400() throws IOException {
    assertThat(refused("GET /hello HTTP/1.1\nHost: x\n\n", 400)).contains("bare LF");
  }

  @Test
  void randomBytesAre400() throws IOException {
    byte[] garbage = new byte[300];
    new Random(42).nextBytes(garbage);
    garbage[garbage.length - 2] = '\r';
    garbage[garbage.length - 1] = '\n';
    refused(garbage, 400);
  }

  @Test
  void badRequestLinesAre400() throws IOException {
    refused("GARBAGE\r\n\r\n", 400);
    refused("GET hello HTTP/1.1\r\n\r\n", 400);
    refused("G(T /hello HTTP/1.1\r\n\r\n", 400);
    refused("GET /hello HTTP/9\r\n\r\n", 400);
  }

  @Test
  void anUnknownHttpVersionIs505() throws IOException {
    refused("GET /hello HTTP/2.0\r\n\r\n", 505);
  }

  @Test
  void malformedPercentEncodingInThePathIs400() throws IOException {
    refused("GET /a%zz HTTP/1.1\r\nHost: x\r\n\r\n", 400);
  }

  @Test
  void illegalHeaderNamesAre400() throws IOException {
    refused("GET /hello HTTP/1.1\r\nBad Header: x\r\n\r\n", 400);
    refused("GET /hello HTTP/1.1\r\n: empty\r\n\r\n", 400);
    refused("GET /hello HTTP/1.1\r\nHost: x\r\n folded\r\n\r\n", 400);
  }

  @Test
  void badContentLengthsAre400() throws IOException {
    refused("POST /json HTTP/1.1\r\nContent-Length: abc\r\n\r\n", 400);
    refused("POST /json HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400);
    refused("POST /json HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nx", 400);
    refused(
        "POST /json HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        400);
  }

  @Test
  void anUnsupportedTransferEncodingIs501Json() throws IOException {
    assertThat(refused("POST /json HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n", 501))
        .contains("chunked");
  }

  @Test
  void badChunkSizesAre400() throws IOException {
    refused("POST /upload HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\nabc\r\n", 400);
    refused("POST /upload HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcdef\r\n", 400);
  }

  @Test
  void aTruncatedChunkedBodyIsAnsweredAfterTheBodyTimeout() throws IOException {
    long started = System.nanoTime();
    refused("POST /upload HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc", 408);
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(4));
  }

  @Test
  void aBodyShorterThanItsContentLengthIsRefusedNotAccepted() throws IOException {
    try (RawClient raw = new RawClient(server.port())) {
      raw.send("POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: 2147483648\r\n\r\nhello");
      raw.socket.shutdownOutput(); // D12: half-close before the declared length
      RawClient.Response response = raw.read();
      assertThat(response.status()).isEqualTo(400);
      assertThat(response.body()).contains("ended after 5 of its 2147483648 bytes");
    }
  }

  @Test
  void aBodyThatStallsIsAnswered408WithinTheTimeout() throws IOException {
    refused("POST /upload HTTP/1.1\r\nContent-Length: 100\r\n\r\nonly a part", 408);
  }

  @Test
  void anUnfinishedHeaderBlockIsAnswered408AfterTheHeaderTimeout() throws IOException {
    long started = System.nanoTime();
    assertThat(refused("GET /hello HTTP/1.1\r\nHost: x\r\n", 408)).contains("did not arrive");
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(4));
  }

  @Test
  void aHeaderTrickledByteByByteStillEndsAtTheHeaderTimeout() throws Exception {
    try (RawClient raw = new RawClient(server.port(), 5000)) {
      long started = System.nanoTime();
      raw.send("GET /hello HTTP/1.1\r\n");
      RawClient.Response response = null;
      for (int i = 0; i < 40 && response == null; i++) {
        try {
          raw.send("X-Slow: y\r\n");
          raw.socket.setSoTimeout(100);
          response = raw.read();
        } catch (java.net.SocketTimeoutException e) {
          // not answered yet: keep trickling, as a slowloris client does
        } catch (java.net.SocketException e) {
          break;
        }
      }
      assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(3));
      assertThat(response).isNotNull();
      assertThat(response.status()).isEqualTo(408);
    }
  }

  @Test
  void anOversizedHeaderIs431NotAReset() throws IOException {
    String big = "x".repeat(1 << 20);
    refused("GET /hello HTTP/1.1\r\nX-Big: " + big + "\r\n\r\n", 431);
  }

  @Test
  void tooManyHeadersAre431() throws IOException {
    StringBuilder request = new StringBuilder("GET /hello HTTP/1.1\r\n");
    for (int i = 0; i < 300; i++) {
      request.append("X-H").append(i).append(": v\r\n");
    }
    refused(request.append("\r\n").toString(), 431);
  }

  @Test
  void anOversizedUriIs414() throws IOException {
    refused("GET /" + "a".repeat(1 << 20) + " HTTP/1.1\r\n\r\n", 414);
    refused("GET /" + "a".repeat(3000) + " HTTP/1.1\r\n\r\n", 414);
  }

  @Test
  void anUnsupportedExpectationIs417() throws IOException {
    refused("POST /json HTTP/1.1\r\nExpect: magic\r\nContent-Length: 0\r\n\r\n", 417);
  }

  @Test
  void aLargeBodySentBeforeReadingGetsThe413NotAReset() throws IOException {
    byte[] body = new byte[10 << 20];
    try (RawClient raw = new RawClient(server.port(), 10_000)) {
      raw.send("POST /json HTTP/1.1\r\nHost: x\r\nContent-Length: " + body.length + "\r\n\r\n");
      raw.send(body);
      RawClient.Response response = raw.read();
      assertThat(response.status()).isEqualTo(413);
      assertThat(response.body()).contains("detail");
    }
  }

  @Test
  void aRepeatedQueryParameterIs400NamingIt() throws IOException {
    try (RawClient raw = new RawClient(server.port())) {
      RawClient.Response response =
          raw.send("GET /query?id=a&id=b HTTP/1.1\r\nHost: x\r\n\r\n").read();
      assertThat(response.status()).isEqualTo(400);
      assertThat(response.body()).contains("'id' given 2 times");
      response = raw.send("GET /labels?label=a=1&label=b=2 HTTP/1.1\r\nHost: x\r\n\r\n").read();
      assertThat(response.status()).as("queryAll declares it repeatable").isEqualTo(200);
      assertThat(response.body()).isEqualTo("{\"label\":[\"a=1\",\"b=2\"]}");
    }
  }

  @Test
  void aDuplicateAuthHeaderIs400NotFirstOneWins() throws IOException {
    try (RawClient raw = new RawClient(server.port())) {
      RawClient.Response response =
          raw.send("GET /api/hello HTTP/1.1\r\nX-Key: secret\r\nX-Key: other\r\n\r\n").read();
      assertThat(response.status()).isEqualTo(400);
      assertThat(response.body()).contains("'X-Key' given more than once");
      response = raw.send("GET /api/hello HTTP/1.1\r\nX-Key: wrong\r\n\r\n").read();
      assertThat(response.status()).isEqualTo(401);
      assertThat(response.body()).isEqualTo("{\"detail\":\"missing or invalid X-Key\"}");
      response = raw.send("GET /api/hello HTTP/1.1\r\nX-Key: secret\r\n\r\n").read();
      assertThat(response.status()).isEqualTo(200);
    }
  }

  @Test
  void unknownRoutesAndMethodsAreJsonAndKeepTheConnection() throws IOException {
    try (RawClient raw = new RawClient(server.port())) {
      assertThat(raw.send("GET /nope HTTP/1.1\r\n\r\n").read().status()).isEqualTo(404);
      assertThat(raw.send("DELETE /hello HTTP/1.1\r\n\r\n").read().body()).contains("detail");
      assertThat(raw.send("GET /hello HTTP/1.1\r\n\r\n").read().status()).isEqualTo(200);
    }
  }

  @Test
  void anIdleKeepAliveConnectionIsClosedAfterTheIdleTimeout() throws IOException {
    try (TestServer idle = new TestServer(b -> b.idleTimeout(Duration.ofMillis(300)));
        RawClient raw = new RawClient(idle.port(), 5000)) {
      assertThat(raw.send("GET /hello HTTP/1.1\r\n\r\n").read().status()).isEqualTo(200);
      long started = System.nanoTime();
      assertThat(raw.closedByServer()).isTrue();
      assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(3));
    }
  }

  @Test
  void aConnectionThatSendsNothingIsClosedAfterTheIdleTimeout() throws IOException {
    try (TestServer idle = new TestServer(b -> b.idleTimeout(Duration.ofMillis(300)));
        RawClient raw = new RawClient(idle.port(), 5000)) {
      assertThat(raw.closedByServer()).isTrue();
    }
  }
}
