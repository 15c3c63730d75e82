package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.http.Json;
import java.io.InputStream;
import java.math.BigInteger;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code paddock server} over HTTPS with self-signed certificates made by {@code openssl}: the API
 * and the gateway on one TLS port, a renewed certificate picked up without a restart, a bad pair
 * refused at start-up naming its setting, plain HTTP on the port refused at once.
 */
class TlsApiTest {
  @RegisterExtension final ServerProcess server = new ServerProcess();
  @TempDir Path dir;

  @Test
  void aClientTrustingTheCertificateReachesHealthAndCreatesASandboxOverHttps() throws Exception {
    Pair pair = Pair.create(dir, "first");
    String url = server.start(pair.settings());
    assertThat(url).startsWith("https://127.0.0.1:");
    try (HttpClient http = HttpClient.newBuilder().sslContext(trusting(pair)).build()) {
      assertThat(send(http, "GET", url + "/health", null).body()).contains("ok");
      HttpResponse<String> created = send(http, "POST", url + "/api/v1/sandboxes", "{}");
      assertThat(created.statusCode()).as(created.body()).isEqualTo(200);
      String id =
          (String) Json.parseObject(created.body().getBytes(StandardCharsets.UTF_8)).get("id");
      String sandbox = url + "/api/v1/sandboxes/" + id;
      Awaitility.await("sandbox running")
          .atMost(Duration.ofSeconds(60))
          .until(() -> send(http, "GET", sandbox, null).body(), b -> b.contains("RUNNING"));
      String info = send(http, "GET", sandbox, null).body();
      assertThat(info).contains("\"url\":\"" + url + "/sandboxes/" + id + "/agent");
      assertThat(send(http, "DELETE", sandbox, null).statusCode()).isLessThan(300);
    }
    assertThat(Files.readString(server.dataDir().resolve("server.json"))).contains(url);
  }

  @Test
  void replacedFilesReachNewConnectionsWithoutARestart() throws Exception {
    Pair first = Pair.create(dir, "first");
    Pair second = Pair.create(dir, "second");
    Path cert = dir.resolve("served.crt");
    Path key = dir.resolve("served.key");
    Files.copy(first.cert, cert);
    Files.copy(first.key, key);
    Map<String, String> settings =
        Map.of(
            "PADDOCK_TLS_CERT", cert.toString(),
            "PADDOCK_TLS_KEY", key.toString(),
            "PADDOCK_TLS_RELOAD_INTERVAL", "200ms");
    int port = URI.create(server.start(settings)).getPort();
    SSLContext client = trusting(first, second);
    assertThat(servedSerial(client, port)).isEqualTo(first.serial());

    Files.copy(second.key, key, StandardCopyOption.REPLACE_EXISTING);
    Files.copy(second.cert, cert, StandardCopyOption.REPLACE_EXISTING);
    Awaitility.await("the second certificate served")
        .atMost(Duration.ofSeconds(20))
        .until(() -> servedSerial(client, port), second.serial()::equals);
  }

  @Test
  void aBadPairStopsStartUpNamingTheSetting() throws Exception {
    Pair first = Pair.create(dir, "first");
    Pair other = Pair.create(dir, "other");
    assertThat(startFailing(first.cert, other.key))
        .contains("PADDOCK_TLS_KEY")
        .contains(other.key + " does not match the certificate in " + first.cert);
    Path text = Files.writeString(dir.resolve("notes.txt"), "not a key\n");
    assertThat(startFailing(first.cert, text))
        .contains("PADDOCK_TLS_KEY")
        .contains(text + " is not a PEM private key");
    assertThat(startFailing(dir.resolve("absent.crt"), first.key))
        .contains("PADDOCK_TLS_CERT")
        .contains("an existing PEM file");
  }

  /** What {@code paddock server} printed on stderr when it refused to start (exit code 2). */
  private String startFailing(Path cert, Path key) throws Exception {
    ServerProcess.Run run =
        server.cli(
            Map.of("PADDOCK_TLS_CERT", cert.toString(), "PADDOCK_TLS_KEY", key.toString()),
            "",
            "server",
            "--port",
            "0");
    assertThat(run.exit()).as(run.err()).isEqualTo(2);
    return run.err();
  }

  @Test
  void plainHttpOnTheTlsPortFailsWithoutAHang() throws Exception {
    int port = URI.create(server.start(Pair.create(dir, "first").settings())).getPort();
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(10_000);
      socket.getOutputStream().write("GET /health HTTP/1.1\r\nHost: x\r\n\r\n".getBytes());
      long started = System.nanoTime();
      byte[] answer = socket.getInputStream().readAllBytes(); // a TLS alert, then the end
      assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));
      assertThat(new String(answer, StandardCharsets.ISO_8859_1)).doesNotContain("HTTP/1.1");
    }
  }

  private static HttpResponse<String> send(HttpClient http, String method, String url, String body)
      throws Exception {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(url))
            .header("Authorization", "Bearer " + ServerProcess.ADMIN_KEY)
            .header("Content-Type", "application/json")
            .method(
                method,
                body == null
                    ? HttpRequest.BodyPublishers.noBody()
                    : HttpRequest.BodyPublishers.ofString(body))
            .timeout(Duration.ofSeconds(30))
            .build();
    return http.send(request, HttpResponse.BodyHandlers.ofString());
  }

  private static SSLContext trusting(Pair... pairs) throws Exception {
    KeyStore trusted = KeyStore.getInstance("PKCS12");
    trusted.load(null, null);
    for (Pair pair : pairs) {
      trusted.setCertificateEntry(pair.cert.toString(), pair.certificate());
    }
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trusted);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, tmf.getTrustManagers(), null);
    return context;
  }

  /** The serial of the certificate a new connection is served. */
  private static BigInteger servedSerial(SSLContext client, int port) throws Exception {
    try (SSLSocket socket = (SSLSocket) client.getSocketFactory().createSocket("127.0.0.1", port)) {
      socket.setSoTimeout(10_000);
      socket.startHandshake();
      return ((X509Certificate) socket.getSession().getPeerCertificates()[0]).getSerialNumber();
    }
  }

  /** A self-signed RSA certificate for 127.0.0.1 and its PKCS#8 key. */
  private record Pair(Path cert, Path key) {
    static Pair create(Path dir, String name) throws Exception {
      Pair pair = new Pair(dir.resolve(name + ".crt"), dir.resolve(name + ".key"));
      Process openssl =
          new ProcessBuilder(
                  List.of(
                      "openssl",
                      "req",
                      "-x509",
                      "-nodes",
                      "-newkey",
                      "rsa:2048",
                      "-keyout",
                      pair.key.toString(),
                      "-out",
                      pair.cert.toString(),
                      "-days",
                      "2",
                      "-subj",
                      "/CN=localhost",
                      "-addext",
                      "subjectAltName=IP:127.0.0.1,DNS:localhost"))
              .redirectErrorStream(true)
              .start();
      String output = new String(openssl.getInputStream().readAllBytes());
      assertThat(openssl.waitFor(60, TimeUnit.SECONDS)).isTrue();
      assertThat(openssl.exitValue()).as(output).isZero();
      return pair;
    }

    Map<String, String> settings() {
      return Map.of("PADDOCK_TLS_CERT", cert.toString(), "PADDOCK_TLS_KEY", key.toString());
    }

    X509Certificate certificate() throws Exception {
      try (InputStream in = Files.newInputStream(cert)) {
        return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
      }
    }

    BigInteger serial() throws Exception {
      return certificate().getSerialNumber();
    }
  }
}
