package dev.paddock.agent.search;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The byte searches agree with {@link String#indexOf} on texts chosen to trip skip tables. */
class LineFinderTest {
  @Test
  void literalSearchesFindEveryOccurrenceThatIndexOfFinds() {
    Random random = new Random(1);
    for (int round = 0; round < 2000; round++) {
      String text = randomText(random, 1 + random.nextInt(300));
      int start = random.nextInt(text.length());
      String needle =
          text.substring(start, Math.min(text.length(), start + 1 + random.nextInt(12)));
      for (boolean fold : new boolean[] {false, true}) {
        LineFinder finder = LineFinder.of(needle, true, fold);
        byte[] bytes = text.getBytes(StandardCharsets.US_ASCII);
        String haystack = fold ? text.toLowerCase() : text;
        String wanted = fold ? needle.toLowerCase() : needle;
        for (int from = 0; from <= bytes.length; from += 1 + random.nextInt(5)) {
          assertThat(finder.find(bytes, from, bytes.length))
              .as("'%s' in '%s' from %d (fold %s)", needle, text, from, fold)
              .isEqualTo(haystack.indexOf(wanted, from));
        }
      }
    }
  }

  /** Few letters, so needles repeat and overlap ("abab", "aaa"). */
  private static String randomText(Random random, int length) {
    StringBuilder text = new StringBuilder(length);
    for (int i = 0; i < length; i++) {
      text.append("abAB\n".charAt(random.nextInt(5)));
    }
    return text.toString();
  }
}
