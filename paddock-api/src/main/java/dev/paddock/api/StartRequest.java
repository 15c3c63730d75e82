package dev.paddock.api;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What a caller asks for when it creates a sandbox; every part is optional. Build with {@link
 * #builder()}; {@link #defaults()} is the default spec with a new id and nothing else.
 *
 * @param specId the spec (default spec when empty)
 * @param sandboxId the id to use (a new one when empty)
 * @param image the image to run instead of the spec's (image-based backends; must match the
 *     operator's allowed patterns)
 * @param env variables merged over the spec's and the forwarded ones
 * @param resources limits overriding the spec's, each within the operator's maximum
 * @param labels the caller's labels, for finding the sandbox again
 * @param workingDir the working directory instead of the spec's
 * @param timeout the longest the sandbox may live (the operator's default when empty)
 * @param idleTimeout how long it may stay idle (the operator's default when empty)
 * @param onTimeout what to do at the timeout (default delete)
 * @param onIdle what to do when idle for {@code idleTimeout} (default pause)
 * @param queueTimeout past capacity, how long to wait in the start queue for a slot instead of
 *     failing at once (empty: fail at once, as without a queue)
 * @param autoResume whether gateway traffic that may wake it (a signed URL, a public port) resumes
 *     it while paused (default false: such traffic is answered 409)
 */
public record StartRequest(
    Optional<String> specId,
    Optional<String> sandboxId,
    Optional<String> image,
    Map<String, String> env,
    Resources resources,
    Map<String, String> labels,
    Optional<String> workingDir,
    Optional<Duration> timeout,
    Optional<Duration> idleTimeout,
    Optional<LifetimeAction> onTimeout,
    Optional<LifetimeAction> onIdle,
    Optional<Duration> queueTimeout,
    boolean autoResume) {
  public StartRequest {
    Objects.requireNonNull(specId, "specId");
    Objects.requireNonNull(sandboxId, "sandboxId");
    Objects.requireNonNull(image, "image");
    env = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(env));
    Objects.requireNonNull(resources, "resources");
    labels = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(labels));
    Objects.requireNonNull(workingDir, "workingDir");
    Objects.requireNonNull(timeout, "timeout");
    Objects.requireNonNull(idleTimeout, "idleTimeout");
    Objects.requireNonNull(onTimeout, "onTimeout");
    Objects.requireNonNull(onIdle, "onIdle");
    Objects.requireNonNull(queueTimeout, "queueTimeout");
  }

  /** The same request without a queue timeout (what a start admitted from the queue runs). */
  public StartRequest withoutQueue() {
    return withQueue(Optional.empty());
  }

  /** The same request waiting up to {@code timeout} in the start queue. */
  public StartRequest withQueueTimeout(Duration timeout) {
    return withQueue(Optional.of(timeout));
  }

  private StartRequest withQueue(Optional<Duration> queue) {
    return new StartRequest(
        specId,
        sandboxId,
        image,
        env,
        resources,
        labels,
        workingDir,
        timeout,
        idleTimeout,
        onTimeout,
        onIdle,
        queue,
        autoResume);
  }

  /** The default spec, a new id, nothing else. */
  public static StartRequest defaults() {
    return builder().build();
  }

  public static Builder builder() {
    return new Builder();
  }

  /** Builder; not thread-safe. */
  public static final class Builder {
    private Optional<String> specId = Optional.empty();
    private Optional<String> sandboxId = Optional.empty();
    private Optional<String> image = Optional.empty();
    private final Map<String, String> env = new LinkedHashMap<>();
    private Resources resources = Resources.NONE;
    private final Map<String, String> labels = new LinkedHashMap<>();
    private Optional<String> workingDir = Optional.empty();
    private Optional<Duration> timeout = Optional.empty();
    private Optional<Duration> idleTimeout = Optional.empty();
    private Optional<LifetimeAction> onTimeout = Optional.empty();
    private Optional<LifetimeAction> onIdle = Optional.empty();
    private Optional<Duration> queueTimeout = Optional.empty();
    private boolean autoResume;

    private Builder() {}

    public Builder specId(String specId) {
      this.specId = Optional.of(specId);
      return this;
    }

    public Builder sandboxId(String sandboxId) {
      this.sandboxId = Optional.of(sandboxId);
      return this;
    }

    public Builder image(String image) {
      this.image = Optional.of(image);
      return this;
    }

    public Builder env(Map<String, String> env) {
      this.env.putAll(env);
      return this;
    }

    public Builder resources(Resources resources) {
      this.resources = Objects.requireNonNull(resources, "resources");
      return this;
    }

    public Builder labels(Map<String, String> labels) {
      this.labels.putAll(labels);
      return this;
    }

    public Builder workingDir(String dir) {
      this.workingDir = Optional.of(dir);
      return this;
    }

    public Builder timeout(Duration timeout) {
      this.timeout = Optional.of(timeout);
      return this;
    }

    public Builder idleTimeout(Duration idleTimeout) {
      this.idleTimeout = Optional.of(idleTimeout);
      return this;
    }

    public Builder onTimeout(LifetimeAction action) {
      this.onTimeout = Optional.of(action);
      return this;
    }

    public Builder onIdle(LifetimeAction action) {
      this.onIdle = Optional.of(action);
      return this;
    }

    /** Past capacity, wait up to {@code timeout} in the start queue for a slot. */
    public Builder queueTimeout(Duration timeout) {
      this.queueTimeout = Optional.of(timeout);
      return this;
    }

    /** Resume on gateway traffic that may wake it (see {@link StartRequest#autoResume()}). */
    public Builder autoResume(boolean on) {
      this.autoResume = on;
      return this;
    }

    public StartRequest build() {
      return new StartRequest(
          specId,
          sandboxId,
          image,
          env,
          resources,
          labels,
          workingDir,
          timeout,
          idleTimeout,
          onTimeout,
          onIdle,
          queueTimeout,
          autoResume);
    }
  }
}
