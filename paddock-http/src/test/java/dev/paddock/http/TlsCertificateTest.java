package dev.paddock.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import javax.net.ssl.SSLContext;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** PEM certificate files read with the JDK, and a watched pair swapped under a running server. */
class TlsCertificateTest {
  @TempDir static Path dir;
  private static PemPair rsa;
  private static PemPair ec;

  @BeforeAll
  static void pairs() throws Exception {
    rsa = PemPair.create(dir, "rsa", "rsa:2048");
    ec = PemPair.create(dir, "ec", "ec");
  }

  @Test
  void readsPkcs8RsaAndEcKeysWithTheirChains() throws Exception {
    for (PemPair pair : List.of(rsa, ec)) {
      TlsCertificate loaded = TlsCertificate.load(pair.certificate(), pair.key());
      assertThat(loaded.leaf().getSerialNumber()).isEqualTo(pair.read().getSerialNumber());
      assertThat(Files.readString(pair.key())).contains("BEGIN PRIVATE KEY");
    }
  }

  @Test
  void readsATraditionalRsaKey() throws Exception {
    Path pkcs1 = dir.resolve("rsa-traditional.key");
    PemPair.openssl(
        List.of(
            "openssl",
            "pkey",
            "-in",
            rsa.key().toString(),
            "-traditional",
            "-out",
            pkcs1.toString()));
    assertThat(Files.readString(pkcs1)).contains("BEGIN RSA PRIVATE KEY");
    TlsCertificate loaded = TlsCertificate.load(rsa.certificate(), pkcs1);
    assertThat(loaded.leaf().getSerialNumber()).isEqualTo(rsa.read().getSerialNumber());
  }

  @Test
  void aTraditionalEcKeyIsRefusedWithTheConversionCommand() throws Exception {
    Path sec1 = dir.resolve("ec-traditional.key");
    PemPair.openssl(List.of("openssl", "ec", "-in", ec.key().toString(), "-out", sec1.toString()));
    assertThatThrownBy(() -> TlsCertificate.load(ec.certificate(), sec1))
        .isInstanceOfSatisfying(
            TlsFileException.class, e -> assertThat(e.part()).isEqualTo(TlsFileException.Part.KEY))
        .hasMessageContaining("EC PRIVATE KEY")
        .hasMessageContaining("openssl pkcs8 -topk8 -nocrypt -in " + sec1);
  }

  @Test
  void aKeyOfAnotherCertificateIsRefused() throws Exception {
    PemPair other = PemPair.create(dir, "other-rsa", "rsa:2048");
    assertThatThrownBy(() -> TlsCertificate.load(rsa.certificate(), other.key()))
        .isInstanceOfSatisfying(
            TlsFileException.class, e -> assertThat(e.part()).isEqualTo(TlsFileException.Part.KEY))
        .hasMessageContaining(
            other.key() + " does not match the certificate in " + rsa.certificate());
    assertThatThrownBy(() -> TlsCertificate.load(rsa.certificate(), ec.key()))
        .hasMessageContaining("a EC key for a RSA certificate");
  }

  @Test
  void aFileThatIsNotPemOrIsMissingNamesItsPart() throws Exception {
    Path text = Files.writeString(dir.resolve("not-pem.txt"), "hello\n");
    assertThatThrownBy(() -> TlsCertificate.load(text, rsa.key()))
        .isInstanceOfSatisfying(
            TlsFileException.class,
            e -> assertThat(e.part()).isEqualTo(TlsFileException.Part.CERTIFICATE))
        .hasMessageContaining("is not a PEM certificate");
    assertThatThrownBy(() -> TlsCertificate.load(rsa.certificate(), text))
        .hasMessageContaining("is not a PEM private key");
    assertThatThrownBy(() -> TlsCertificate.load(dir.resolve("absent.crt"), rsa.key()))
        .hasMessageContaining("no such file");
  }

  @Test
  void aReplacedPairReachesNewConnectionsAndABrokenOneKeepsTheOld() throws Exception {
    Path certificate = dir.resolve("served.crt");
    Path key = dir.resolve("served.key");
    install(rsa, certificate, key);
    List<Object> events = new CopyOnWriteArrayList<>();
    TlsCertificate.Listener listener =
        new TlsCertificate.Listener() {
          @Override
          public void reloaded(X509Certificate leaf) {
            events.add(leaf.getSerialNumber());
          }

          @Override
          public void reloadFailed(TlsFileException problem) {
            events.add(problem.getMessage());
          }
        };
    SSLContext client = PemPair.trusting(rsa, ec);
    try (TlsCertificate watched =
            TlsCertificate.watch(certificate, key, Duration.ofMillis(100), listener);
        // A cold JVM's first client handshake can take longer than the test server's 700 ms.
        TestServer server =
            new TestServer(b -> b.tls(watched).headerTimeout(Duration.ofSeconds(10)))) {
      BigInteger first = rsa.read().getSerialNumber();
      assertThat(PemPair.servedSerial(client, server.port())).isEqualTo(first);

      Files.copy(ec.certificate(), certificate, StandardCopyOption.REPLACE_EXISTING);
      Awaitility.await("the half-replaced pair reported")
          .atMost(Duration.ofSeconds(10))
          .until(() -> events.stream().anyMatch(e -> e.toString().contains("does not match")));
      assertThat(PemPair.servedSerial(client, server.port())).isEqualTo(first);

      Files.copy(ec.key(), key, StandardCopyOption.REPLACE_EXISTING);
      BigInteger second = ec.read().getSerialNumber();
      Awaitility.await("new connections served the new certificate")
          .atMost(Duration.ofSeconds(10))
          .until(() -> PemPair.servedSerial(client, server.port()), second::equals);
      assertThat(events).contains(second);
      try (HttpClient http = HttpClient.newBuilder().sslContext(client).build()) {
        HttpResponse<String> hello =
            http.send(
                HttpRequest.newBuilder(URI.create("https://127.0.0.1:" + server.port() + "/hello"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());
        assertThat(hello.statusCode()).isEqualTo(200);
      }
    }
  }

  private static void install(PemPair pair, Path certificate, Path key) throws Exception {
    Files.copy(pair.certificate(), certificate, StandardCopyOption.REPLACE_EXISTING);
    Files.copy(pair.key(), key, StandardCopyOption.REPLACE_EXISTING);
  }
}
