package dev.paddock.api.spi;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Parses the values of backend settings the same way in every backend. */
public final class SettingValues {
  private static final Pattern SHORT_DURATION = Pattern.compile("(\\d+)\\s*(ms|s|m)");
  private static final Pattern SIZE = Pattern.compile("(\\d+)\\s*([kmgt]?)i?b?");

  private SettingValues() {}

  /**
   * {@code 500ms}, {@code 5s}, {@code 2m} or ISO-8601 ({@code PT5S}); {@code fallback} when absent
   * or blank.
   *
   * @throws IllegalArgumentException naming {@code key} for anything else
   */
  public static Duration duration(String key, String value, Duration fallback) {
    if (value == null || value.isBlank()) {
      return fallback;
    }
    String text = value.trim();
    if (text.startsWith("PT") || text.startsWith("pt")) {
      return Duration.parse(text);
    }
    Matcher m = SHORT_DURATION.matcher(text);
    if (!m.matches()) {
      throw new IllegalArgumentException(
          key + ": '" + value + "' is not a duration (write e.g. 500ms, 5s, 2m or PT5S)");
    }
    long n = Long.parseLong(m.group(1));
    return switch (m.group(2)) {
      case "ms" -> Duration.ofMillis(n);
      case "s" -> Duration.ofSeconds(n);
      default -> Duration.ofMinutes(n);
    };
  }

  /**
   * A byte size: {@code 512m}, {@code 2g}, {@code 2GiB}, a plain count; empty for {@code 0}, {@code
   * none} or blank (no limit).
   *
   * @throws IllegalArgumentException naming {@code key} for anything else
   */
  public static OptionalLong size(String key, String value) {
    String text = value == null ? "" : value.trim().toLowerCase(Locale.ROOT);
    if (text.isEmpty() || text.equals("none") || text.equals("0")) {
      return OptionalLong.empty();
    }
    Matcher m = SIZE.matcher(text);
    if (!m.matches()) {
      throw new IllegalArgumentException(
          key + ": '" + value + "' is not a size (write e.g. 512m, 2g or a byte count)");
    }
    long n = Long.parseLong(m.group(1));
    int shift =
        switch (m.group(2)) {
          case "k" -> 10;
          case "m" -> 20;
          case "g" -> 30;
          case "t" -> 40;
          default -> 0;
        };
    return OptionalLong.of(n << shift);
  }

  /** {@code paddock.data-dir}, else {@code ~/.paddock}; absolute. */
  public static Path dataDir(Map<String, String> settings) {
    String dir = settings.get("paddock.data-dir");
    Path path = dir != null ? Path.of(dir) : Path.of(System.getProperty("user.home"), ".paddock");
    return path.toAbsolutePath().normalize();
  }

  /** The settings under {@code prefix}, with it removed (e.g. {@code docker.spec.env.}). */
  public static Map<String, String> withPrefix(Map<String, String> settings, String prefix) {
    Map<String, String> found = new TreeMap<>();
    settings.forEach(
        (key, value) -> {
          if (key.startsWith(prefix) && key.length() > prefix.length()) {
            found.put(key.substring(prefix.length()), value);
          }
        });
    return found;
  }
}
