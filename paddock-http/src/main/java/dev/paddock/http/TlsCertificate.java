package dev.paddock.http;

import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.function.Supplier;
import javax.net.ssl.SSLContext;

/**
 * A server certificate chain and its private key read from PEM files, as the {@link SSLContext} a
 * server hands each new connection ({@link HttpServerConfig.Builder#tls(Supplier)}).
 *
 * <p>Read with the JDK only: the certificate file holds one or more {@code CERTIFICATE} blocks, the
 * leaf first; the key file one {@code PRIVATE KEY} (PKCS#8: RSA, EC or EdDSA) or {@code RSA PRIVATE
 * KEY} (PKCS#1) block. An {@code EC PRIVATE KEY} or an encrypted key is refused with the {@code
 * openssl} command that converts it. The key must match the certificate (checked by a signature).
 *
 * <p>{@link #watch} re-reads both files every {@code interval}: when either changed and the new
 * pair loads, connections accepted from then on get the new context (open ones keep theirs); a pair
 * that fails to load (e.g. the certificate renewed, the key not yet) is reported to the listener
 * once and the previous pair stays in use. Thread-safe: {@link #get()} is a volatile read.
 */
public interface TlsCertificate extends Supplier<SSLContext>, AutoCloseable {
  /** What a watched pair reports; called on the watch thread. */
  interface Listener {
    /** A changed pair was loaded and is in use for new connections from now on. */
    void reloaded(X509Certificate leaf);

    /** A changed pair failed to load; the previous one stays in use. */
    void reloadFailed(TlsFileException problem);
  }

  /**
   * Reads the pair once, never again.
   *
   * @throws TlsFileException naming the file at fault and what is wrong with it
   */
  static TlsCertificate load(Path certificate, Path key) {
    return PemCertificate.load(certificate, key);
  }

  /**
   * Reads the pair now and again every {@code interval} until {@link #close()}, on one virtual
   * thread.
   *
   * @throws TlsFileException when the pair cannot be used now
   */
  static TlsCertificate watch(Path certificate, Path key, Duration interval, Listener listener) {
    return WatchedCertificate.start(certificate, key, interval, listener);
  }

  /** The context for a connection accepted now. */
  @Override
  SSLContext get();

  /** The leaf certificate in use now. */
  X509Certificate leaf();

  /** Stops watching the files (a no-op for a pair read once); the context in use stays valid. */
  @Override
  void close();
}
