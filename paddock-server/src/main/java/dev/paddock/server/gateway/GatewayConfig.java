package dev.paddock.server.gateway;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * How the sandbox gateway routes and times out. Immutable; build with {@link #builder(String)}.
 *
 * <p>Defaults: path mode only (no host domain), connect timeout 5 s, upstream idle timeout 300 s (a
 * stream with no byte for that long is cut), 32 idle keep-alive connections kept per upstream
 * address for 30 s, signed URLs valid 1 h unless the request says otherwise (at most 7 days), a
 * request that auto-resumes a sandbox waits up to 60 s for it (then 503 with {@code Retry-After}).
 */
public final class GatewayConfig {
  private final String tokenSecret;
  private final Optional<String> domain;
  private final Duration connectTimeout;
  private final Duration idleTimeout;
  private final Duration poolIdle;
  private final int poolSize;
  private final Duration defaultUrlLifetime;
  private final Duration maxUrlLifetime;
  private final boolean secure;
  private final Duration resumeWait;

  private GatewayConfig(Builder b) {
    this.tokenSecret = b.tokenSecret;
    this.domain = b.domain;
    this.connectTimeout = b.connectTimeout;
    this.idleTimeout = b.idleTimeout;
    this.poolIdle = b.poolIdle;
    this.poolSize = b.poolSize;
    this.defaultUrlLifetime = b.defaultUrlLifetime;
    this.maxUrlLifetime = b.maxUrlLifetime;
    this.secure = b.secure;
    this.resumeWait = b.resumeWait;
  }

  /** How long a request that auto-resumes a paused sandbox waits for it to run. */
  public Duration resumeWait() {
    return resumeWait;
  }

  /** Whether clients reach the control plane over HTTPS (for {@code X-Forwarded-Proto}). */
  public boolean secure() {
    return secure;
  }

  /**
   * A builder whose signed URLs are keyed by {@code tokenSecret} (the control plane's master
   * secret: every replica must agree on it, and a URL signed by one is valid on all).
   */
  public static Builder builder(String tokenSecret) {
    return new Builder(tokenSecret);
  }

  String tokenSecret() {
    return tokenSecret;
  }

  /** The wildcard domain of host mode ({@code {port}-{id}.{domain}}); absent: path mode only. */
  public Optional<String> domain() {
    return domain;
  }

  public Duration connectTimeout() {
    return connectTimeout;
  }

  public Duration idleTimeout() {
    return idleTimeout;
  }

  Duration poolIdle() {
    return poolIdle;
  }

  int poolSize() {
    return poolSize;
  }

  public Duration defaultUrlLifetime() {
    return defaultUrlLifetime;
  }

  public Duration maxUrlLifetime() {
    return maxUrlLifetime;
  }

  /** Builds a {@link GatewayConfig}. */
  public static final class Builder {
    private final String tokenSecret;
    private Optional<String> domain = Optional.empty();
    private Duration connectTimeout = Duration.ofSeconds(5);
    private Duration idleTimeout = Duration.ofSeconds(300);
    private Duration poolIdle = Duration.ofSeconds(30);
    private int poolSize = 32;
    private Duration defaultUrlLifetime = Duration.ofHours(1);
    private Duration maxUrlLifetime = Duration.ofDays(7);
    private boolean secure;
    private Duration resumeWait = Duration.ofSeconds(60);

    private Builder(String tokenSecret) {
      if (Objects.requireNonNull(tokenSecret, "tokenSecret").length() < 16) {
        throw new IllegalArgumentException("the gateway's token secret needs at least 16 chars");
      }
      this.tokenSecret = tokenSecret;
    }

    /** Serves host mode under {@code domain} (e.g. {@code sandboxes.example.com}). */
    public Builder domain(String domain) {
      String d =
          Objects.requireNonNull(domain, "domain").strip().toLowerCase(java.util.Locale.ROOT);
      if (d.isEmpty() || d.startsWith(".") || d.contains("/") || d.contains(":")) {
        throw new IllegalArgumentException(
            "gateway domain must be a bare DNS name such as sandboxes.example.com, got '"
                + domain
                + "'");
      }
      this.domain = Optional.of(d);
      return this;
    }

    public Builder connectTimeout(Duration timeout) {
      this.connectTimeout = positive(timeout, "connectTimeout");
      return this;
    }

    /** How long an upstream may send nothing before the request is cut (0: never). */
    public Builder idleTimeout(Duration timeout) {
      if (timeout.isNegative()) {
        throw new IllegalArgumentException("idleTimeout must not be negative");
      }
      this.idleTimeout = timeout;
      return this;
    }

    public Builder pool(int size, Duration idle) {
      if (size < 0) {
        throw new IllegalArgumentException("pool size must not be negative");
      }
      this.poolSize = size;
      this.poolIdle = positive(idle, "pool idle");
      return this;
    }

    public Builder urlLifetimes(Duration byDefault, Duration max) {
      this.defaultUrlLifetime = positive(byDefault, "default URL lifetime");
      this.maxUrlLifetime = positive(max, "max URL lifetime");
      return this;
    }

    /** How long a request that auto-resumes a sandbox waits for it (then 503, Retry-After). */
    public Builder resumeWait(Duration wait) {
      this.resumeWait = positive(wait, "resumeWait");
      return this;
    }

    public Builder secure(boolean secure) {
      this.secure = secure;
      return this;
    }

    public GatewayConfig build() {
      return new GatewayConfig(this);
    }

    private static Duration positive(Duration d, String what) {
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException(what + " must be positive, got " + d);
      }
      return d;
    }
  }
}
