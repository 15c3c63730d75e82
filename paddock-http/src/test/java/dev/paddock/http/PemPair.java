package dev.paddock.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.TrustManagerFactory;

/** A self-signed certificate and its key made by {@code openssl} for a test, as PEM files. */
record PemPair(Path certificate, Path key) {
  /** {@code kind}: {@code rsa:2048} or {@code ec}; the key file is PKCS#8 (openssl 3's default). */
  static PemPair create(Path dir, String name, String kind) throws Exception {
    PemPair pair = new PemPair(dir.resolve(name + ".crt"), dir.resolve(name + ".key"));
    List<String> argv =
        new ArrayList<>(List.of("openssl", "req", "-x509", "-nodes", "-newkey", kind));
    if (kind.equals("ec")) {
      argv.addAll(List.of("-pkeyopt", "ec_paramgen_curve:P-256"));
    }
    argv.addAll(
        List.of(
            "-keyout",
            pair.key.toString(),
            "-out",
            pair.certificate.toString(),
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=IP:127.0.0.1,DNS:localhost"));
    openssl(argv);
    return pair;
  }

  /** Runs {@code openssl ARGS}; fails the test when it fails. */
  static void openssl(List<String> argv) throws Exception {
    Process process = new ProcessBuilder(argv).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes());
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(process.exitValue()).as(output).isZero();
  }

  X509Certificate read() throws Exception {
    try (InputStream in = Files.newInputStream(certificate)) {
      return (X509Certificate) CertificateFactory.getInstance("X.509").generateCertificate(in);
    }
  }

  /** A client context that trusts exactly {@code pairs}. */
  static SSLContext trusting(PemPair... pairs) throws Exception {
    KeyStore trusted = KeyStore.getInstance("PKCS12");
    trusted.load(null, null);
    for (int i = 0; i < pairs.length; i++) {
      trusted.setCertificateEntry("trusted-" + i, pairs[i].read());
    }
    TrustManagerFactory tmf =
        TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
    tmf.init(trusted);
    SSLContext context = SSLContext.getInstance("TLS");
    context.init(null, tmf.getTrustManagers(), null);
    return context;
  }

  /** The serial of the certificate a new connection to {@code port} is served. */
  static BigInteger servedSerial(SSLContext client, int port) throws Exception {
    try (SSLSocket socket = (SSLSocket) client.getSocketFactory().createSocket("127.0.0.1", port)) {
      socket.setSoTimeout(5000);
      socket.startHandshake();
      return ((X509Certificate) socket.getSession().getPeerCertificates()[0]).getSerialNumber();
    }
  }
}
