package dev.paddock.cli.logging;

import java.util.Locale;
import java.util.Map;
import org.slf4j.event.Level;

/**
 * The log's two settings, {@code PADDOCK_LOG_FORMAT} ({@code text}, {@code json}) and {@code
 * PADDOCK_LOG_LEVEL} ({@code trace}..{@code error}, default {@code info}): taken from the
 * environment when the first line is logged, then from the server's settings by {@link #configure}.
 * Process-wide, as the log itself is.
 */
public final class PaddockLogging {
  /** The setting names this class reads, with what they mean. */
  public static final Map<String, String> SETTINGS =
      Map.of(
          "PADDOCK_LOG_FORMAT", "text (default) or json: one JSON object per line",
          "PADDOCK_LOG_LEVEL", "trace, debug, info (default), warn or error");

  private static volatile LogFormat format = LogFormat.TEXT;
  private static volatile Level level = Level.INFO;

  static {
    try {
      configure(System.getenv());
    } catch (IllegalArgumentException e) {
      // Logging must not fail to start; the server reports the invalid setting at configure().
    }
  }

  private PaddockLogging() {}

  /**
   * Applies {@code PADDOCK_LOG_FORMAT} and {@code PADDOCK_LOG_LEVEL} from {@code settings}; absent
   * ones are left as they are.
   *
   * @throws IllegalArgumentException naming the setting whose value is invalid
   */
  public static void configure(Map<String, String> settings) {
    String f = settings.get("PADDOCK_LOG_FORMAT");
    if (f != null && !f.isBlank()) {
      format = parse("PADDOCK_LOG_FORMAT", f, LogFormat.class);
    }
    String l = settings.get("PADDOCK_LOG_LEVEL");
    if (l != null && !l.isBlank()) {
      level = parse("PADDOCK_LOG_LEVEL", l, Level.class);
    }
  }

  private static <E extends Enum<E>> E parse(String name, String value, Class<E> type) {
    try {
      return Enum.valueOf(type, value.trim().toUpperCase(Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          name
              + ": '"
              + value
              + "' is not allowed; use one of "
              + java.util.Arrays.toString(type.getEnumConstants()).toLowerCase(Locale.ROOT),
          e);
    }
  }

  static LogFormat format() {
    return format;
  }

  static Level level() {
    return level;
  }
}
