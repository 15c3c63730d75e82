package dev.paddock.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** HTTPS and WSS with a self-signed certificate made by keytool for this test. */
class TlsTest {
  private static final char[] PASSWORD = "changeit".toCharArray();

  @TempDir static Path dir;
  private static KeyStore keys;
  private TestServer server;
  private HttpClient client;

  @BeforeAll
  static void certificate() throws Exception {
    keys = selfSigned(dir.resolve("server.p12"));
  }

  @BeforeEach
  void start() throws Exception {
    KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
    kmf.init(keys, PASSWORD);
    SSLContext serverContext = SSLContext.getInstance("TLS");
    serverContext.init(kmf.getKeyManagers(), null, null);
    server = new TestServer(b -> b.tls(serverContext));
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(keys);
    SSLContext clientContext = SSLContext.getInstance("TLS");
    clientContext.init(null, tmf.getTrustManagers(), null);
    client = HttpClient.newBuilder().sslContext(clientContext).build();
  }

  @AfterEach
  void stop() {
    server.close();
    client.close();
  }

  private static KeyStore selfSigned(Path store) throws Exception {
    Path keytool =
        Path.of(ProcessHandle.current().info().command().orElseThrow()).resolveSibling("keytool");
    Process process =
        new ProcessBuilder(
                keytool.toString(),
                "-genkeypair",
                "-alias",
                "server",
                "-keyalg",
                "EC",
                "-dname",
                "CN=localhost",
                "-ext",
                "SAN=ip:127.0.0.1,dns:localhost",
                "-validity",
                "2",
                "-storetype",
                "PKCS12",
                "-keystore",
                store.toString(),
                "-storepass",
                new String(PASSWORD))
            .redirectErrorStream(true)
            .start();
    String output = new String(process.getInputStream().readAllBytes());
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).as(output).isZero();
    KeyStore keys = KeyStore.getInstance("PKCS12");
    try (InputStream in = Files.newInputStream(store)) {
      keys.load(in, PASSWORD);
    }
    return keys;
  }

  private URI https(String path) {
    return URI.create("https://127.0.0.1:" + server.port() + path);
  }

  @Test
  void httpsServesRoutesWithKeepAlive() throws Exception {
    for (int i = 0; i < 3; i++) {
      HttpResponse<String> response =
          client.send(
              HttpRequest.newBuilder(https("/hello")).build(),
              HttpResponse.BodyHandlers.ofString());
      assertThat(response.statusCode()).isEqualTo(200);
      assertThat(response.body()).isEqualTo("{\"hello\":\"world\"}");
    }
    HttpResponse<String> upload =
        client.send(
            HttpRequest.newBuilder(https("/upload"))
                .POST(HttpRequest.BodyPublishers.ofByteArray(new byte[3 << 20]))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(upload.body()).isEqualTo("{\"received\":" + (3 << 20) + "}");
  }

  @Test
  void wssEchoes() throws Exception {
    WebSocketTest.Received received = new WebSocketTest.Received();
    WebSocket ws =
        client
            .newWebSocketBuilder()
            .buildAsync(URI.create("wss://127.0.0.1:" + server.port() + "/ws/echo"), received)
            .get(5, TimeUnit.SECONDS);
    ws.sendText("secure", true).get(5, TimeUnit.SECONDS);
    org.awaitility.Awaitility.await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> received.texts.contains("secure"));
    ws.sendClose(1000, "").get(5, TimeUnit.SECONDS);
    assertThat(received.closed.get(5, TimeUnit.SECONDS)).startsWith("1000");
  }

  @Test
  void aClientThatNeverHandshakesIsClosedAfterTheHandshakeTimeout() throws IOException {
    try (Socket socket = new Socket("127.0.0.1", server.port())) {
      socket.setSoTimeout(5000);
      long started = System.nanoTime();
      socket.getInputStream().readAllBytes(); // at most a TLS alert, then the end of stream
      assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(4));
    }
  }

  @Test
  void plainHttpOnTheTlsPortIsRefusedWithoutAHang() throws IOException {
    try (RawClient raw = new RawClient(server.port(), 5000)) {
      raw.send("GET /hello HTTP/1.1\r\nHost: x\r\n\r\n");
      byte[] answer = raw.in.readAllBytes(); // a TLS alert record, then the end of stream
      assertThat(answer).isNotEmpty();
      assertThat(answer[0]).as("TLS alert record").isEqualTo((byte) 21);
    }
  }
}
