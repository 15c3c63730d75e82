package dev.paddock.http;

/**
 * The {@code Date} header's text, an IMF-fixdate ({@code Sun, 06 Nov 1994 08:49:37 GMT}, RFC 9110
 * §5.6.7), formatted at most once per second per server. Written by hand, without java.time:
 * initialising {@code DateTimeFormatter} (which even {@code LocalDate} pulls in) costs milliseconds
 * in a fresh JVM, and an agent's first request, often a backend's readiness probe, would pay them.
 */
final class HttpDate {
  private static final String[] DAYS = {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"};
  private static final String[] MONTHS = {
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"
  };

  private volatile long second = -1;
  private volatile String text = "";

  String now() {
    long current = System.currentTimeMillis() / 1000;
    if (current != second) {
      text = format(current);
      second = current;
    }
    return text;
  }

  /** {@code epochSecond} as an IMF-fixdate. */
  static String format(long epochSecond) {
    long days = Math.floorDiv(epochSecond, 86_400);
    int seconds = Math.floorMod(epochSecond, 86_400);
    // The civil date of a day count (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms"):
    // eras of 400 years from 0000-03-01, so that February, with its leap day, ends each year.
    long z = days + 719_468;
    long era = Math.floorDiv(z, 146_097);
    long dayOfEra = z - era * 146_097;
    long yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365;
    long dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100);
    long monthIndex = (5 * dayOfYear + 2) / 153; // 0 = March
    int day = (int) (dayOfYear - (153 * monthIndex + 2) / 5 + 1);
    int month = (int) (monthIndex < 10 ? monthIndex + 3 : monthIndex - 9);
    long year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
    StringBuilder text = new StringBuilder(29);
    text.append(DAYS[Math.floorMod(days + 3, 7)]).append(", "); // 1970-01-01 was a Thursday
    twoDigits(text, day).append(' ').append(MONTHS[month - 1]).append(' ').append(year).append(' ');
    twoDigits(text, seconds / 3600).append(':');
    twoDigits(text, seconds / 60 % 60).append(':');
    return twoDigits(text, seconds % 60).append(" GMT").toString();
  }

  private static StringBuilder twoDigits(StringBuilder text, int value) {
    return text.append((char) ('0' + value / 10)).append((char) ('0' + value % 10));
  }
}
