package dev.paddock.http;

import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;

/** The {@code Date} header's text, formatted at most once per second per server. */
final class HttpDate {
  private volatile long second = -1;
  private volatile String text = "";

  String now() {
    long current = System.currentTimeMillis() / 1000;
    if (current != second) {
      text =
          DateTimeFormatter.RFC_1123_DATE_TIME.format(
              ZonedDateTime.ofInstant(java.time.Instant.ofEpochSecond(current), ZoneOffset.UTC));
      second = current;
    }
    return text;
  }
}
