package dev.paddock.controlplane;

import dev.paddock.api.spi.SettingValues;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.regex.Matcher;
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

  private static final Pattern DURATION = Pattern.compile("(\\d+)\\s*(ms|s|m|h|d)?");

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
   * Reads {@code PADDOCK_ALLOWED_IMAGES}, {@code PADDOCK_MAX_CPUS}, {@code PADDOCK_MAX_MEMORY},
   * {@code PADDOCK_MAX_PIDS}, {@code PADDOCK_MAX_DISK}, {@code PADDOCK_DEFAULT_TIMEOUT}, {@code
   * PADDOCK_MAX_TIMEOUT} and {@code PADDOCK_DEFAULT_IDLE_TIMEOUT} from {@code settings}.
   *
   * @throws IllegalArgumentException naming the setting and what is allowed, for a bad value
   */
  public static SandboxLimits fromSettings(Map<String, String> settings) {
    return new SandboxLimits(
        Optional.ofNullable(settings.get("PADDOCK_ALLOWED_IMAGES")).stream()
            .flatMap(v -> Arrays.stream(v.split(",")))
            .map(String::strip)
            .filter(p -> !p.isEmpty())
            .toList(),
        cpus(settings.get("PADDOCK_MAX_CPUS")),
        SettingValues.size("PADDOCK_MAX_MEMORY", settings.get("PADDOCK_MAX_MEMORY")),
        pids(settings.get("PADDOCK_MAX_PIDS")),
        SettingValues.size("PADDOCK_MAX_DISK", settings.get("PADDOCK_MAX_DISK")),
        duration("PADDOCK_DEFAULT_TIMEOUT", settings.get("PADDOCK_DEFAULT_TIMEOUT")),
        duration("PADDOCK_MAX_TIMEOUT", settings.get("PADDOCK_MAX_TIMEOUT")),
        duration("PADDOCK_DEFAULT_IDLE_TIMEOUT", settings.get("PADDOCK_DEFAULT_IDLE_TIMEOUT")));
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

  private static OptionalDouble cpus(String value) {
    if (value == null || value.isBlank()) {
      return OptionalDouble.empty();
    }
    try {
      double cpus = Double.parseDouble(value.strip());
      if (cpus > 0 && Double.isFinite(cpus)) {
        return OptionalDouble.of(cpus);
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException(
        "PADDOCK_MAX_CPUS: '" + value + "' is not a positive number of cores (e.g. 4 or 0.5)");
  }

  private static OptionalInt pids(String value) {
    if (value == null || value.isBlank()) {
      return OptionalInt.empty();
    }
    try {
      int pids = Integer.parseInt(value.strip());
      if (pids > 0) {
        return OptionalInt.of(pids);
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw new IllegalArgumentException(
        "PADDOCK_MAX_PIDS: '" + value + "' is not a positive whole number of processes");
  }

  /** Seconds, or a number with {@code ms}, {@code s}, {@code m}, {@code h} or {@code d}. */
  static Optional<Duration> duration(String key, String value) {
    if (value == null || value.isBlank()) {
      return Optional.empty();
    }
    Matcher m = DURATION.matcher(value.strip().toLowerCase(Locale.ROOT));
    if (!m.matches()) {
      throw new IllegalArgumentException(
          key + ": '" + value + "' is not a duration (write seconds, or e.g. 90s, 30m, 2h, 1d)");
    }
    long n = Long.parseLong(m.group(1));
    Duration d =
        switch (m.group(2) == null ? "s" : m.group(2)) {
          case "ms" -> Duration.ofMillis(n);
          case "s" -> Duration.ofSeconds(n);
          case "m" -> Duration.ofMinutes(n);
          case "h" -> Duration.ofHours(n);
          default -> Duration.ofDays(n);
        };
    return d.isZero() ? Optional.empty() : Optional.of(d);
  }
}
