package dev.paddock.http;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import javax.net.ssl.SSLContext;

/**
 * Settings of a server made by {@link HttpServers#create(HttpServerConfig)}: where it listens,
 * whether it speaks TLS, and the limits and timeouts that keep a stalled, slow or malformed client
 * from holding a connection (docs/SECURITY.md, "HTTP layer limits"). Every limit is answered with a
 * JSON {@code {"detail"}} reply where HTTP allows one, or a close after its timeout; none hangs.
 *
 * @param address where to listen (port 0 picks a free port; {@code getAddress()} names it)
 * @param backlog the listen backlog (0 or less: the JDK's default)
 * @param tls serve HTTPS with this context (absent: plain HTTP)
 * @param headerTimeout the request line and headers must arrive within this time of their first
 *     byte (else 408 and close); also bounds a TLS handshake
 * @param bodyIdleTimeout the longest wait for the next bytes of a request body (else the body
 *     stream throws, and the client gets 408 when nothing was answered yet)
 * @param idleTimeout how long a keep-alive connection may wait for its next request (then closed)
 * @param writeTimeout the longest a single write to a client may block (a client that stops
 *     reading); the connection is closed after it
 * @param maxHeaderBytes the most bytes of request line plus headers (else 431)
 * @param maxHeaderLineBytes the longest single header line (else 431)
 * @param maxHeaderCount the most header fields (else 431)
 * @param maxUriLength the longest request target (else 414)
 * @param maxDrainBytes the most bytes of an unread request body read and discarded after the reply,
 *     so the client sees the reply and not a reset; past it the connection is closed
 * @param webSocketMaxMessageBytes the largest WebSocket message (else close 1009)
 * @param webSocketPingInterval a ping is sent after this long without a frame from the peer, and
 *     the connection is dropped (1006) when another interval passes in silence
 */
public record HttpServerConfig(
    InetSocketAddress address,
    int backlog,
    Optional<SSLContext> tls,
    Duration headerTimeout,
    Duration bodyIdleTimeout,
    Duration idleTimeout,
    Duration writeTimeout,
    int maxHeaderBytes,
    int maxHeaderLineBytes,
    int maxHeaderCount,
    int maxUriLength,
    long maxDrainBytes,
    int webSocketMaxMessageBytes,
    Duration webSocketPingInterval) {

  public HttpServerConfig {
    Objects.requireNonNull(address, "address");
    Objects.requireNonNull(tls, "tls");
    positive(headerTimeout, "headerTimeout");
    positive(bodyIdleTimeout, "bodyIdleTimeout");
    positive(idleTimeout, "idleTimeout");
    positive(writeTimeout, "writeTimeout");
    positive(webSocketPingInterval, "webSocketPingInterval");
    if (maxHeaderLineBytes < 64 || maxHeaderBytes < maxHeaderLineBytes || maxHeaderCount < 1) {
      throw new IllegalArgumentException(
          "header limits must satisfy 64 <= maxHeaderLineBytes <= maxHeaderBytes and count >= 1");
    }
    if (maxUriLength < 1 || maxDrainBytes < 0 || webSocketMaxMessageBytes < 125) {
      throw new IllegalArgumentException(
          "maxUriLength >= 1, maxDrainBytes >= 0, webSocketMaxMessageBytes >= 125 required");
    }
  }

  private static void positive(Duration value, String name) {
    if (value == null || value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(name + " must be a positive duration, got " + value);
    }
  }

  /** A builder with the defaults documented on each setter, listening on {@code address}. */
  public static Builder builder(InetSocketAddress address) {
    return new Builder(address);
  }

  /** Builds an {@link HttpServerConfig}; every setting has a default. */
  public static final class Builder {
    private final InetSocketAddress address;
    private int backlog = 256;
    private SSLContext tls;
    private Duration headerTimeout = Duration.ofSeconds(20);
    private Duration bodyIdleTimeout = Duration.ofSeconds(60);
    private Duration idleTimeout = Duration.ofSeconds(120);
    private Duration writeTimeout = Duration.ofSeconds(60);
    private int maxHeaderBytes = 64 << 10;
    private int maxHeaderLineBytes = 8 << 10;
    private int maxHeaderCount = 200;
    private int maxUriLength = 8 << 10;
    private long maxDrainBytes = 16L << 20;
    private int webSocketMaxMessageBytes = 16 << 20;
    private Duration webSocketPingInterval = Duration.ofSeconds(30);

    private Builder(InetSocketAddress address) {
      this.address = Objects.requireNonNull(address, "address");
    }

    /** Default 256. */
    public Builder backlog(int backlog) {
      this.backlog = backlog;
      return this;
    }

    /** Serve HTTPS with {@code context}; default plain HTTP. */
    public Builder tls(SSLContext context) {
      this.tls = Objects.requireNonNull(context, "context");
      return this;
    }

    /** Default 20 s. */
    public Builder headerTimeout(Duration timeout) {
      this.headerTimeout = timeout;
      return this;
    }

    /** Default 60 s. */
    public Builder bodyIdleTimeout(Duration timeout) {
      this.bodyIdleTimeout = timeout;
      return this;
    }

    /** Default 120 s. */
    public Builder idleTimeout(Duration timeout) {
      this.idleTimeout = timeout;
      return this;
    }

    /** Default 60 s. */
    public Builder writeTimeout(Duration timeout) {
      this.writeTimeout = timeout;
      return this;
    }

    /** Default 64 KiB. */
    public Builder maxHeaderBytes(int bytes) {
      this.maxHeaderBytes = bytes;
      return this;
    }

    /** Default 8 KiB. */
    public Builder maxHeaderLineBytes(int bytes) {
      this.maxHeaderLineBytes = bytes;
      return this;
    }

    /** Default 200. */
    public Builder maxHeaderCount(int count) {
      this.maxHeaderCount = count;
      return this;
    }

    /** Default 8 KiB. */
    public Builder maxUriLength(int length) {
      this.maxUriLength = length;
      return this;
    }

    /** Default 16 MiB. */
    public Builder maxDrainBytes(long bytes) {
      this.maxDrainBytes = bytes;
      return this;
    }

    /** Default 16 MiB. */
    public Builder webSocketMaxMessageBytes(int bytes) {
      this.webSocketMaxMessageBytes = bytes;
      return this;
    }

    /** Default 30 s. */
    public Builder webSocketPingInterval(Duration interval) {
      this.webSocketPingInterval = interval;
      return this;
    }

    public HttpServerConfig build() {
      return new HttpServerConfig(
          address,
          backlog,
          Optional.ofNullable(tls),
          headerTimeout,
          bodyIdleTimeout,
          idleTimeout,
          writeTimeout,
          maxHeaderBytes,
          maxHeaderLineBytes,
          maxHeaderCount,
          maxUriLength,
          maxDrainBytes,
          webSocketMaxMessageBytes,
          webSocketPingInterval);
    }
  }
}
