package dev.paddock.http;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Supplier;
import javax.net.ssl.SSLContext;

/**
 * Settings of a server made by {@link HttpServers#create(HttpServerConfig)}: where it listens,
 * whether it speaks TLS, and the limits and timeouts that keep a stalled, slow or malformed client
 * from holding a connection (docs/SECURITY.md, "HTTP layer limits"). Every limit is answered with a
 * JSON {@code {"detail"}} reply where HTTP allows one, or a close after its timeout; none hangs.
 *
 * <p>Settings, each with a default in {@link Builder}: {@code address}: where to listen (port 0
 * picks a free port; {@code getAddress()} names it) <br>
 * {@code backlog}: the listen backlog (0 or less: the JDK's default) <br>
 * {@code tls}: serve HTTPS with this context, or with the one a supplier gives at each accepted
 * connection, so a renewed certificate reaches new connections without a restart (absent: plain
 * HTTP) <br>
 * {@code headerTimeout}: the request line and headers must arrive within this time of their first
 * byte (else 408 and close); also bounds a TLS handshake <br>
 * {@code bodyIdleTimeout}: the longest wait for the next bytes of a request body (else the body
 * stream throws, and the client gets 408 when nothing was answered yet) <br>
 * {@code idleTimeout}: how long a keep-alive connection may wait for its next request (then closed)
 * <br>
 * {@code writeTimeout}: the longest a single write to a client may block (a client that stops
 * reading); the connection is closed after it <br>
 * {@code maxHeaderBytes}: the most bytes of request line plus headers (else 431) <br>
 * {@code maxHeaderLineBytes}: the longest single header line (else 431) <br>
 * {@code maxHeaderCount}: the most header fields (else 431) <br>
 * {@code maxUriLength}: the longest request target (else 414) <br>
 * {@code maxDrainBytes}: the most bytes of an unread request body read and discarded after the
 * reply, so the client sees the reply and not a reset; past it the connection is closed <br>
 * {@code webSocketMaxMessageBytes}: the largest WebSocket message (else close 1009) <br>
 * {@code webSocketPingInterval}: a ping is sent after this long without a frame from the peer, and
 * the connection is dropped (1006) when another interval passes in silence
 */
public final class HttpServerConfig {
  private final InetSocketAddress address;
  private final int backlog;
  private final Optional<Supplier<SSLContext>> tls; // absent: plain HTTP
  private final Duration headerTimeout;
  private final Duration bodyIdleTimeout;
  private final Duration idleTimeout;
  private final Duration writeTimeout;
  private final int maxHeaderBytes;
  private final int maxHeaderLineBytes;
  private final int maxHeaderCount;
  private final int maxUriLength;
  private final long maxDrainBytes;
  private final int webSocketMaxMessageBytes;
  private final Duration webSocketPingInterval;
  private final int platformThreads;
  private final Duration platformIdle;

  private HttpServerConfig(Builder b) {
    address = b.address;
    backlog = b.backlog;
    tls = Optional.ofNullable(b.tls);
    headerTimeout = positive(b.headerTimeout, "headerTimeout");
    bodyIdleTimeout = positive(b.bodyIdleTimeout, "bodyIdleTimeout");
    idleTimeout = positive(b.idleTimeout, "idleTimeout");
    writeTimeout = positive(b.writeTimeout, "writeTimeout");
    webSocketPingInterval = positive(b.webSocketPingInterval, "webSocketPingInterval");
    maxHeaderBytes = b.maxHeaderBytes;
    maxHeaderLineBytes = b.maxHeaderLineBytes;
    maxHeaderCount = b.maxHeaderCount;
    maxUriLength = b.maxUriLength;
    maxDrainBytes = b.maxDrainBytes;
    webSocketMaxMessageBytes = b.webSocketMaxMessageBytes;
    platformThreads = b.platformThreads;
    platformIdle = positive(b.platformIdle, "platformIdle");
    if (platformThreads < 0) {
      throw new IllegalArgumentException("platformThreads must be >= 0: " + platformThreads);
    }
    if (maxHeaderLineBytes < 64 || maxHeaderBytes < maxHeaderLineBytes || maxHeaderCount < 1) {
      throw new IllegalArgumentException(
          "header limits must satisfy 64 <= maxHeaderLineBytes <= maxHeaderBytes and count >= 1");
    }
    if (maxUriLength < 1 || maxDrainBytes < 0 || webSocketMaxMessageBytes < 125) {
      throw new IllegalArgumentException(
          "maxUriLength >= 1, maxDrainBytes >= 0, webSocketMaxMessageBytes >= 125 required");
    }
  }

  private static Duration positive(Duration value, String name) {
    if (value == null || value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(name + " must be a positive duration, got " + value);
    }
    return value;
  }

  public InetSocketAddress address() {
    return address;
  }

  public int backlog() {
    return backlog;
  }

  /** Whether the server speaks TLS. */
  public boolean secure() {
    return tls.isPresent();
  }

  /** The TLS context for a connection accepted now; absent for plain HTTP. */
  public Optional<SSLContext> tls() {
    return tls.map(Supplier::get);
  }

  public Duration headerTimeout() {
    return headerTimeout;
  }

  public Duration bodyIdleTimeout() {
    return bodyIdleTimeout;
  }

  public Duration idleTimeout() {
    return idleTimeout;
  }

  public Duration writeTimeout() {
    return writeTimeout;
  }

  public int maxHeaderBytes() {
    return maxHeaderBytes;
  }

  public int maxHeaderLineBytes() {
    return maxHeaderLineBytes;
  }

  public int maxHeaderCount() {
    return maxHeaderCount;
  }

  public int maxUriLength() {
    return maxUriLength;
  }

  public long maxDrainBytes() {
    return maxDrainBytes;
  }

  public int webSocketMaxMessageBytes() {
    return webSocketMaxMessageBytes;
  }

  public Duration webSocketPingInterval() {
    return webSocketPingInterval;
  }

  /**
   * How many connections at most are served on platform threads; the rest, and any connection that
   * waits longer than {@link #platformIdle()} for its next request or is upgraded (WebSocket,
   * takeover), run on the server's executor if one is set, else on virtual threads. 0: every
   * connection there.
   */
  public int platformThreads() {
    return platformThreads;
  }

  /** How long a connection may idle between requests before it gives its platform thread back. */
  public Duration platformIdle() {
    return platformIdle;
  }

  /** A builder with the defaults documented on each setter, listening on {@code address}. */
  public static Builder builder(InetSocketAddress address) {
    return new Builder(address);
  }

  /** Builds an {@link HttpServerConfig}; every setting has a default. */
  public static final class Builder {
    private final InetSocketAddress address;
    private int backlog = 256;
    private Supplier<SSLContext> tls;
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
    private int platformThreads;
    private Duration platformIdle = Duration.ofSeconds(1);

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
      Objects.requireNonNull(context, "context");
      this.tls = () -> context;
      return this;
    }

    /**
     * Serve HTTPS with the context {@code current} gives for each accepted connection (asked on the
     * accept thread: it must answer at once and never fail, e.g. a volatile read).
     */
    public Builder tls(Supplier<SSLContext> current) {
      this.tls = Objects.requireNonNull(current, "current");
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

    /**
     * Default 0 (every connection on a virtual thread). A blocking read on a platform thread is
     * woken by the kernel directly; a virtual thread's goes through the JDK's poller and then a
     * carrier, two more thread wake-ups per read. For a server whose requests mostly wait on
     * another socket (a proxy), that hand-off costs more CPU and latency than its own work, so it
     * keeps its busy connections on platform threads and idle or long-lived ones on virtual threads
     * (docs/CONCURRENCY.md).
     */
    public Builder platformThreads(int count) {
      this.platformThreads = count;
      return this;
    }

    /** Default 1 s. */
    public Builder platformIdle(Duration idle) {
      this.platformIdle = idle;
      return this;
    }

    public HttpServerConfig build() {
      return new HttpServerConfig(this);
    }
  }
}
