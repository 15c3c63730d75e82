package dev.paddock.controlplane;

import dev.paddock.api.settings.Settings;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.regex.Pattern;

/**
 * The operator's bounds on what a create may ask for, and the lifetimes a sandbox gets when it asks
 * for none. Immutable.
 *
 * @param allowedImages glob patterns ({@code *} any run of characters, {@code ?} one) an image
 *     named at create must match; empty: only the configured specs' images
 * @param maxCpus most CPU cores one sandbox may ask for
 * @param maxMemoryBytes most memory
 * @param maxPids most processes
 * @param maxDiskBytes most workspace disk
 * @param defaultTimeout the lifetime of a sandbox that asks for none; empty: unbounded
 * @param maxTimeout the longest lifetime a create or keepalive may ask for
 * @param defaultIdleTimeout the idle timeout of a sandbox that asks for none; empty: never idle
 */
public record SandboxLimits(
    List<String> allowedImages,
    OptionalDouble maxCpus,
    OptionalLong maxMemoryBytes,
    OptionalInt maxPids,
    OptionalLong maxDiskBytes,
    Optional<Duration> defaultTimeout,
    Optional<Duration> maxTimeout,
    Optional<Duration> defaultIdleTimeout) {
  /** No image beyond the specs, no maxima, no default lifetimes. */
  public static final SandboxLimits NONE =
      new SandboxLimits(
          List.of(),
          OptionalDouble.empty(),
          OptionalLong.empty(),
          OptionalInt.empty(),
          OptionalLong.empty(),
          Optional.empty(),
          Optional.empty(),
          Optional.empty());

  public SandboxLimits {
    allowedImages = List.copyOf(allowedImages);
    Objects.requireNonNull(maxCpus, "maxCpus");
    Objects.requireNonNull(maxMemoryBytes, "maxMemoryBytes");
    Objects.requireNonNull(maxPids, "maxPids");
    Objects.requireNonNull(maxDiskBytes, "maxDiskBytes");
    Objects.requireNonNull(defaultTimeout, "defaultTimeout");
    Objects.requireNonNull(maxTimeout, "maxTimeout");
    Objects.requireNonNull(defaultIdleTimeout, "defaultIdleTimeout");
  }

  /**
   * The limits the typed settings ({@link ControlPlaneSettings}) name: {@code
   * PADDOCK_ALLOWED_IMAGES}, {@code PADDOCK_MAX_CPUS}, {@code PADDOCK_MAX_MEMORY}, {@code
   * PADDOCK_MAX_PIDS}, {@code PADDOCK_MAX_DISK}, {@code PADDOCK_DEFAULT_TIMEOUT}, {@code
   * PADDOCK_MAX_TIMEOUT} and {@code PADDOCK_DEFAULT_IDLE_TIMEOUT}. A size of 0 means no limit.
   */
  public static SandboxLimits fromSettings(Settings settings) {
    return new SandboxLimits(
        settings.get(ControlPlaneSettings.ALLOWED_IMAGES),
        settings
            .find(ControlPlaneSettings.MAX_CPUS)
            .map(OptionalDouble::of)
            .orElse(OptionalDouble.empty()),
        positive(settings.find(ControlPlaneSettings.MAX_MEMORY)),
        settings
            .find(ControlPlaneSettings.MAX_PIDS)
            .map(OptionalInt::of)
            .orElse(OptionalInt.empty()),
        positive(settings.find(ControlPlaneSettings.MAX_DISK)),
        settings.find(ControlPlaneSettings.DEFAULT_TIMEOUT),
        settings.find(ControlPlaneSettings.MAX_TIMEOUT),
        settings.find(ControlPlaneSettings.DEFAULT_IDLE_TIMEOUT));
  }

  /**
   * The same from raw values (environment-style names).
   *
   * @throws dev.paddock.api.settings.SettingsException naming the setting, for a bad value
   */
  public static SandboxLimits fromSettings(Map<String, String> values) {
    return fromSettings(Settings.of(ControlPlaneSettings.ALL, values));
  }

  private static OptionalLong positive(Optional<Long> bytes) {
    return bytes.filter(b -> b > 0).map(OptionalLong::of).orElse(OptionalLong.empty());
  }

  /** Whether {@code image} matches one of the allowed patterns. */
  public boolean allowsImage(String image) {
    return allowedImages.stream().anyMatch(p -> glob(p).matcher(image).matches());
  }

  private static Pattern glob(String pattern) {
    StringBuilder regex = new StringBuilder();
    for (char c : pattern.toCharArray()) {
      switch (c) {
        case '*' -> regex.append(".*");
        case '?' -> regex.append('.');
        default -> regex.append(Pattern.quote(String.valueOf(c)));
      }
    }
    return Pattern.compile(regex.toString());
  }
}
