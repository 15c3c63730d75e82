package dev.paddock.cli;

import dev.paddock.api.settings.Setting;
import dev.paddock.api.settings.Settings;
import dev.paddock.http.TlsCertificate;
import dev.paddock.http.TlsFileException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * HTTPS for the control plane (API and gateway on one port, docs/GATEWAY.md "TLS"): the PEM pair it
 * serves, re-read while it runs so a renewed certificate needs no restart.
 */
final class TlsSettings {
  private static final Logger LOG = LoggerFactory.getLogger("paddock.tls");

  static final Setting<Path> CERT =
      Setting.path(
              "PADDOCK_TLS_CERT",
              "PEM certificate chain (leaf first) to serve HTTPS with; needs PADDOCK_TLS_KEY (unset:"
                  + " plain HTTP)")
          .requiring(Files::isRegularFile, "an existing PEM file")
          .withDefaultText("plain HTTP");
  static final Setting<Path> KEY =
      Setting.path(
              "PADDOCK_TLS_KEY",
              "PEM private key of PADDOCK_TLS_CERT: PKCS#8 PRIVATE KEY (RSA, EC, EdDSA) or RSA"
                  + " PRIVATE KEY")
          .requiring(Files::isRegularFile, "an existing PEM file");
  static final Setting<Duration> RELOAD =
      Setting.duration(
              "PADDOCK_TLS_RELOAD_INTERVAL",
              "how often the certificate and key files are re-read; a changed pair serves new"
                  + " connections")
          .requiring(d -> !d.isZero(), "a positive duration such as 5 (seconds) or 500ms")
          .withDefault(Duration.ofSeconds(5));

  static final List<Setting<?>> ALL = List.of(CERT, KEY, RELOAD);

  private TlsSettings() {}

  /**
   * The watched certificate the settings name; empty when neither file is set.
   *
   * @throws IllegalArgumentException naming the setting at fault: one of the pair set without the
   *     other, a file unreadable, not PEM, or a key that does not match the certificate
   */
  static Optional<TlsCertificate> certificate(Settings settings) {
    Optional<Path> cert = settings.find(CERT);
    Optional<Path> key = settings.find(KEY);
    if (cert.isEmpty() && key.isEmpty()) {
      return Optional.empty();
    }
    if (cert.isEmpty() || key.isEmpty()) {
      String missing = cert.isEmpty() ? CERT.name() : KEY.name();
      String given = cert.isEmpty() ? KEY.name() : CERT.name();
      throw new IllegalArgumentException(missing + " is not set: HTTPS needs it with " + given);
    }
    try {
      return Optional.of(
          TlsCertificate.watch(cert.get(), key.get(), settings.get(RELOAD), new Logged()));
    } catch (TlsFileException e) {
      throw new IllegalArgumentException(settingOf(e) + ": " + e.getMessage(), e);
    }
  }

  private static String settingOf(TlsFileException e) {
    return e.part() == TlsFileException.Part.CERTIFICATE ? CERT.name() : KEY.name();
  }

  /** Reports reloads in the server's log. */
  private static final class Logged implements TlsCertificate.Listener {
    @Override
    public void reloaded(X509Certificate leaf) {
      LOG.info(
          "TLS certificate reloaded: {} (serial {}, valid until {})",
          leaf.getSubjectX500Principal().getName(),
          leaf.getSerialNumber().toString(16),
          leaf.getNotAfter().toInstant());
    }

    @Override
    public void reloadFailed(TlsFileException problem) {
      LOG.warn(
          "TLS files changed but cannot be used ({}: {}); still serving the previous certificate",
          settingOf(problem),
          problem.getMessage());
    }
  }
}
