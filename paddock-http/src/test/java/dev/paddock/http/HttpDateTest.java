package dev.paddock.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The hand-written {@code Date} header against java.time's formatter of the same pattern. */
class HttpDateTest {
  private static final DateTimeFormatter IMF_FIXDATE =
      DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss 'GMT'", Locale.US)
          .withZone(ZoneOffset.UTC);

  @Test
  void writesRfc9110sExample() {
    assertThat(HttpDate.format(784_111_777L)).isEqualTo("Sun, 06 Nov 1994 08:49:37 GMT");
  }

  @Test
  void agreesWithJavaTimeFromTheEpochToTheYear9999() {
    SplittableRandom random = new SplittableRandom(14);
    long last = Instant.parse("9999-12-31T23:59:59Z").getEpochSecond();
    for (int i = 0; i < 100_000; i++) {
      long second = i < 3 ? new long[] {0, 951_782_400L, last}[i] : random.nextLong(last + 1);
      assertThat(HttpDate.format(second))
          .as("epoch second %d", second)
          .isEqualTo(IMF_FIXDATE.format(Instant.ofEpochSecond(second)));
    }
  }

  @Test
  void theServersClockSaysNow() {
    long before = System.currentTimeMillis() / 1000;
    String now = new HttpDate().now();
    long after = System.currentTimeMillis() / 1000;
    assertThat(now).isIn(HttpDate.format(before), HttpDate.format(after));
  }
}
