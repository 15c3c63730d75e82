package dev.paddock.http;

import dev.paddock.http.TlsFileException.Part;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;
import javax.net.ssl.SSLContext;

/**
 * A PEM pair re-read on one virtual thread ({@code paddock-tls-watch}, docs/CONCURRENCY.md). The
 * files' bytes are compared, not their times, so a copy that keeps the mtime, or two writes within
 * the clock's resolution, are still seen.
 */
final class WatchedCertificate implements TlsCertificate {
  private final Path certificateFile;
  private final Path keyFile;
  private final Duration interval;
  private final TlsCertificate.Listener listener;
  private volatile PemCertificate current;
  private byte[] seenCertificate; // watch thread only after start
  private byte[] seenKey; // watch thread only after start
  private String lastProblem = ""; // watch thread only: a lasting problem is reported once
  private final Thread watcher;

  private WatchedCertificate(
      Path certificateFile, Path keyFile, Duration interval, TlsCertificate.Listener listener) {
    this.certificateFile = certificateFile;
    this.keyFile = keyFile;
    this.interval = interval;
    this.listener = listener;
    seenCertificate = PemCertificate.read(Part.CERTIFICATE, certificateFile);
    seenKey = PemCertificate.read(Part.KEY, keyFile);
    current = PemCertificate.load(certificateFile, seenCertificate, keyFile, seenKey);
    watcher = Thread.ofVirtual().name("paddock-tls-watch").unstarted(this::watchLoop);
  }

  static WatchedCertificate start(
      Path certificateFile, Path keyFile, Duration interval, TlsCertificate.Listener listener) {
    if (interval.isNegative() || interval.isZero()) {
      throw new IllegalArgumentException("interval must be positive, got " + interval);
    }
    WatchedCertificate watched =
        new WatchedCertificate(
            certificateFile, keyFile, interval, Objects.requireNonNull(listener, "listener"));
    watched.watcher.start();
    return watched;
  }

  private void watchLoop() {
    while (!Thread.currentThread().isInterrupted()) {
      try {
        Thread.sleep(interval);
      } catch (InterruptedException e) {
        return; // closed
      }
      poll();
    }
  }

  private void poll() {
    try {
      byte[] certificate = PemCertificate.read(Part.CERTIFICATE, certificateFile);
      byte[] key = PemCertificate.read(Part.KEY, keyFile);
      if (Arrays.equals(certificate, seenCertificate) && Arrays.equals(key, seenKey)) {
        return;
      }
      seenCertificate = certificate;
      seenKey = key; // a broken pair is reported once, and retried when a file changes again
      current = PemCertificate.load(certificateFile, certificate, keyFile, key);
      lastProblem = "";
      listener.reloaded(current.leaf());
    } catch (TlsFileException e) {
      if (!e.getMessage().equals(lastProblem)) {
        lastProblem = e.getMessage();
        listener.reloadFailed(e);
      }
    }
  }

  @Override
  public SSLContext get() {
    return current.get();
  }

  @Override
  public X509Certificate leaf() {
    return current.leaf();
  }

  @Override
  public void close() {
    watcher.interrupt();
  }
}
