package dev.paddock.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

class JsonTextTest {
  private static String quoted(byte[] bytes) {
    JsonText text = new JsonText().raw("\"").escaped(bytes, 0, bytes.length).raw("\"");
    return (String) Json.parseAny(Arrays.copyOf(text.array(), text.size()));
  }

  @Test
  void validUtf8RoundTripsThroughAJsonParser() {
    String original = "plain ascii \"quoted\" back\\slash\n\t\r\b\f \u0001\u001f é ü 中文 😀 end";
    assertThat(quoted(original.getBytes(StandardCharsets.UTF_8))).isEqualTo(original);
  }

  @Test
  void invalidBytesBecomeReplacementCharactersAndTheJsonStaysValid() {
    byte[] bytes = {
      'a',
      (byte) 0xFF,
      'b',
      (byte) 0xC3,
      'c',
      (byte) 0xE0,
      (byte) 0x80,
      (byte) 0x80,
      'd',
      (byte) 0xED,
      (byte) 0xA0,
      (byte) 0x80
    };
    assertThat(quoted(bytes)).startsWith("a\uFFFDb\uFFFDc\uFFFD").contains("d\uFFFD");
  }

  @Test
  void randomBytesAlwaysGiveValidJsonWithTheJdkDecodersValidCharacters() {
    Random random = new Random(42);
    for (int round = 0; round < 200; round++) {
      byte[] bytes = new byte[random.nextInt(3000)];
      random.nextBytes(bytes);
      String decoded = quoted(bytes);
      // The JDK replaces a maximal invalid subpart with one U+FFFD, JsonText each bad byte: the
      // valid characters must agree, in order.
      assertThat(decoded.replace("\uFFFD", ""))
          .isEqualTo(new String(bytes, StandardCharsets.UTF_8).replace("\uFFFD", ""));
    }
  }

  @Test
  void largeChunksGrowTheBuffer() {
    byte[] bytes = new byte[300_000];
    Arrays.fill(bytes, (byte) '"');
    assertThat(quoted(bytes)).hasSize(300_000).matches("\"+");
  }
}
