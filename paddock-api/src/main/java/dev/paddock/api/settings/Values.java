package dev.paddock.api.settings;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * How each kind of value is written, one way for every setting. Each parser throws {@link
 * IllegalArgumentException} whose message says what is allowed.
 */
final class Values {
  static final String BOOLEAN = "true/false, yes/no, on/off or 1/0";
  static final String DURATION = "a duration such as 30 (seconds), 30s, 5m, 1h, 500ms or PT30S";
  static final String SIZE = "a size such as 512m, 2g, 2GiB or a byte count";

  private static final Pattern DURATION_TEXT = Pattern.compile("(\\d+)\\s*(ms|s|m|h|d)?");
  private static final Pattern SIZE_TEXT = Pattern.compile("(\\d+)\\s*([kmgt]?)(i?b)?");

  private Values() {}

  static boolean bool(String text) {
    return switch (text.trim().toLowerCase(Locale.ROOT)) {
      case "true", "yes", "on", "1" -> true;
      case "false", "no", "off", "0" -> false;
      default -> throw new IllegalArgumentException(BOOLEAN);
    };
  }

  static Duration duration(String text) {
    String t = text.trim().toLowerCase(Locale.ROOT);
    if (t.startsWith("p")) {
      try {
        return nonNegative(Duration.parse(t.toUpperCase(Locale.ROOT)));
      } catch (RuntimeException e) {
        throw new IllegalArgumentException(DURATION);
      }
    }
    Matcher m = DURATION_TEXT.matcher(t);
    if (!m.matches()) {
      throw new IllegalArgumentException(DURATION);
    }
    long n = number(m.group(1), DURATION);
    String unit = m.group(2) == null ? "s" : m.group(2);
    try {
      return switch (unit) {
        case "ms" -> Duration.ofMillis(n);
        case "m" -> Duration.ofMinutes(n);
        case "h" -> Duration.ofHours(n);
        case "d" -> Duration.ofDays(n);
        default -> Duration.ofSeconds(n);
      };
    } catch (ArithmeticException e) {
      throw new IllegalArgumentException(DURATION);
    }
  }

  private static Duration nonNegative(Duration d) {
    if (d.isNegative()) {
      throw new IllegalArgumentException(DURATION);
    }
    return d;
  }

  /** Bytes; {@code 0} and {@code none} are 0 (which limits read as "no limit"). */
  static long size(String text) {
    String t = text.trim().toLowerCase(Locale.ROOT);
    if (t.equals("none")) {
      return 0;
    }
    Matcher m = SIZE_TEXT.matcher(t);
    if (!m.matches() || (m.group(3) != null && m.group(2).isEmpty() && m.group(3).equals("ib"))) {
      throw new IllegalArgumentException(SIZE);
    }
    long n = number(m.group(1), SIZE);
    int shift =
        switch (m.group(2)) {
          case "k" -> 10;
          case "m" -> 20;
          case "g" -> 30;
          case "t" -> 40;
          default -> 0;
        };
    if (shift > 0 && Long.numberOfLeadingZeros(n) <= shift) {
      throw new IllegalArgumentException(SIZE);
    }
    return n << shift;
  }

  static long integer(String text, long min, long max) {
    String allowed = wholeNumber(min, max);
    long n;
    try {
      n = Long.parseLong(text.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(allowed);
    }
    if (n < min || n > max) {
      throw new IllegalArgumentException(allowed);
    }
    return n;
  }

  static String wholeNumber(long min, long max) {
    if (max == Integer.MAX_VALUE || max == Long.MAX_VALUE) {
      return "a whole number of at least " + min;
    }
    return "a whole number from " + min + " to " + max;
  }

  static double decimal(String text, double min) {
    String allowed = decimalAllowed(min);
    double d;
    try {
      d = Double.parseDouble(text.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(allowed);
    }
    if (!Double.isFinite(d) || d <= min) {
      throw new IllegalArgumentException(allowed);
    }
    return d;
  }

  static String decimalAllowed(double min) {
    return "a number greater than " + trim(min) + " (fractions allowed, e.g. 1.5)";
  }

  static List<String> words(String text) {
    return Arrays.stream(text.split("[,\\s]+")).filter(s -> !s.isBlank()).toList();
  }

  private static long number(String digits, String allowed) {
    try {
      return Long.parseLong(digits);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(allowed);
    }
  }

  private static String trim(double d) {
    return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
  }
}
