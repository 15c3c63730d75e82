package dev.paddock.api;

import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * What a sandbox was created with, beyond its spec, and what its owner changed since (labels,
 * public ports): kept by the control plane and shown with the sandbox. Never holds its environment
 * (values may be secrets).
 *
 * @param image the image asked for at create (image-based backends); empty: the spec's
 * @param labels the caller's labels (sorted)
 * @param resources the effective limits (the spec's defaults, overridden at create)
 * @param workingDir the effective working directory; empty for records made before it was kept
 * @param timeout the lifetime it was given (renewed by a keepalive without a timeout); empty: none
 * @param idleTimeout how long it may stay idle before {@code onIdle}; empty: never
 * @param onTimeout what happens when its lifetime ends
 * @param onIdle what happens when it stayed idle for {@code idleTimeout}
 * @param autoResume whether traffic through the gateway that may wake it (a signed URL or a public
 *     port) resumes it when it is paused, instead of an immediate 409
 * @param publicPorts ports of the sandbox its owner opened to anyone through the gateway, no key or
 *     signed URL needed (sorted)
 */
public record SandboxSettings(
    Optional<String> image,
    Map<String, String> labels,
    Resources resources,
    Optional<String> workingDir,
    Optional<Duration> timeout,
    Optional<Duration> idleTimeout,
    LifetimeAction onTimeout,
    LifetimeAction onIdle,
    boolean autoResume,
    Set<Integer> publicPorts) {
  /** No image, labels, limits or idle timeout; delete at timeout, pause when idle. */
  public static final SandboxSettings NONE =
      new SandboxSettings(
          Optional.empty(),
          Map.of(),
          Resources.NONE,
          Optional.empty(),
          Optional.empty(),
          Optional.empty(),
          LifetimeAction.DELETE,
          LifetimeAction.PAUSE,
          false,
          Set.of());

  public SandboxSettings {
    Objects.requireNonNull(image, "image");
    labels = java.util.Collections.unmodifiableMap(new TreeMap<>(labels));
    Objects.requireNonNull(resources, "resources");
    Objects.requireNonNull(workingDir, "workingDir");
    Objects.requireNonNull(timeout, "timeout");
    Objects.requireNonNull(idleTimeout, "idleTimeout");
    Objects.requireNonNull(onTimeout, "onTimeout");
    Objects.requireNonNull(onIdle, "onIdle");
    publicPorts = java.util.Collections.unmodifiableSortedSet(new TreeSet<>(publicPorts));
  }

  /** Settings without auto-resume and without public ports. */
  public SandboxSettings(
      Optional<String> image,
      Map<String, String> labels,
      Resources resources,
      Optional<String> workingDir,
      Optional<Duration> timeout,
      Optional<Duration> idleTimeout,
      LifetimeAction onTimeout,
      LifetimeAction onIdle) {
    this(
        image,
        labels,
        resources,
        workingDir,
        timeout,
        idleTimeout,
        onTimeout,
        onIdle,
        false,
        Set.of());
  }

  /** The same settings with {@code ports} as the public ports instead. */
  public SandboxSettings withPublicPorts(Set<Integer> ports) {
    return new SandboxSettings(
        image,
        labels,
        resources,
        workingDir,
        timeout,
        idleTimeout,
        onTimeout,
        onIdle,
        autoResume,
        ports);
  }

  /** The same settings with auto-resume {@code on} or off. */
  public SandboxSettings withAutoResume(boolean on) {
    return new SandboxSettings(
        image,
        labels,
        resources,
        workingDir,
        timeout,
        idleTimeout,
        onTimeout,
        onIdle,
        on,
        publicPorts);
  }

  /** The same settings with the working directory {@code dir} instead. */
  public SandboxSettings withWorkingDir(String dir) {
    return new SandboxSettings(
        image,
        labels,
        resources,
        Optional.of(dir),
        timeout,
        idleTimeout,
        onTimeout,
        onIdle,
        autoResume,
        publicPorts);
  }

  /** The same settings with {@code labels} instead. */
  public SandboxSettings withLabels(Map<String, String> newLabels) {
    return new SandboxSettings(
        image,
        newLabels,
        resources,
        workingDir,
        timeout,
        idleTimeout,
        onTimeout,
        onIdle,
        autoResume,
        publicPorts);
  }
}
