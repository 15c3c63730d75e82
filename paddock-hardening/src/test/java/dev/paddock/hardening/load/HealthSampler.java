package dev.paddock.hardening.load;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Asks the control plane's {@code GET /health} every {@link #PERIOD} on one keep-alive connection
 * of its own and records how long each answer took, into the current phase's {@link Latencies}. A
 * plain socket on a platform thread of its own, not the JDK's HTTP client: that client hands every
 * reply from its selector thread to an executor, two wake-ups in the test's own busy JVM that would
 * be counted against the server.
 */
final class HealthSampler implements AutoCloseable {
  static final Duration PERIOD = Duration.ofMillis(50);
  private static final int TIMEOUT_MILLIS = 10_000;

  private final String what;
  private final String host;
  private final int port;
  private final byte[] request;
  private final ScheduledExecutorService timer;
  private final List<String> failures = new CopyOnWriteArrayList<>();
  private volatile Latencies phase;
  private Socket socket; // only the timer's thread touches it
  private InputStream in;

  HealthSampler(String controlPlaneUrl, Latencies first) {
    this("health-sampler", controlPlaneUrl, first);
  }

  /**
   * Times {@code GET /health} at {@code url} on a thread named {@code what} (which also names the
   * server in failures).
   */
  HealthSampler(String what, String url, Latencies first) {
    this.what = what;
    URI uri = URI.create(url);
    this.host = uri.getHost();
    this.port = uri.getPort();
    this.request =
        ("GET /health HTTP/1.1\r\nHost: " + host + ":" + port + "\r\n\r\n")
            .getBytes(StandardCharsets.US_ASCII);
    this.phase = first;
    this.timer =
        Executors.newSingleThreadScheduledExecutor(
            r -> Thread.ofPlatform().daemon().name(what).unstarted(r));
    timer.scheduleAtFixedRate(this::sample, 0, PERIOD.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** From now on, samples go to {@code next}. */
  void phase(Latencies next) {
    phase = next;
  }

  /** Every answer that was not a 200 {@code {"status": "ok"}}, and every failed request. */
  List<String> failures() {
    return List.copyOf(failures);
  }

  private void sample() {
    Latencies into = phase;
    long started = System.nanoTime();
    try {
      String reply = exchange();
      into.add(System.nanoTime() - started);
      if (!reply.startsWith("HTTP/1.1 200 ") || !reply.endsWith("\"ok\"}")) {
        failures.add(what + ": GET /health -> " + reply);
      }
    } catch (IOException | RuntimeException e) {
      // A refused, reset or timed-out health check is a failure of the run, not of the sampler.
      failures.add(what + ": GET /health failed: " + e);
      into.add(System.nanoTime() - started);
      closeSocket();
    }
  }

  /** One request on the kept connection (opened when there is none); the status line and body. */
  private String exchange() throws IOException {
    if (socket == null) {
      socket = new Socket(host, port);
      socket.setTcpNoDelay(true);
      socket.setSoTimeout(TIMEOUT_MILLIS);
      in = new BufferedInputStream(socket.getInputStream());
    }
    OutputStream out = socket.getOutputStream();
    out.write(request);
    out.flush();
    String status = line();
    int length = -1;
    boolean close = false;
    for (String header = line(); !header.isEmpty(); header = line()) {
      String lower = header.toLowerCase(Locale.ROOT);
      if (lower.startsWith("content-length:")) {
        length = Integer.parseInt(lower.substring("content-length:".length()).trim());
      } else if (lower.startsWith("connection:") && lower.contains("close")) {
        close = true;
      }
    }
    if (length < 0) {
      throw new IOException("no Content-Length in the reply to GET /health: " + status);
    }
    String body = new String(in.readNBytes(length), StandardCharsets.UTF_8);
    if (close) {
      closeSocket();
    }
    return status + " " + body;
  }

  private String line() throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    for (int b = in.read(); b != '\n'; b = in.read()) {
      if (b < 0) {
        throw new IOException("the server closed the connection mid-reply");
      }
      if (b != '\r') {
        bytes.write(b);
      }
    }
    return bytes.toString(StandardCharsets.US_ASCII);
  }

  private void closeSocket() {
    if (socket != null) {
      try {
        socket.close();
      } catch (IOException e) {
        // Closing a broken connection; the next sample opens a new one.
      }
      socket = null;
    }
  }

  @Override
  public void close() {
    timer.shutdownNow();
    try {
      timer.awaitTermination(15, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    // The timer's thread has ended: its connection is this thread's to close.
    closeSocket();
  }
}
