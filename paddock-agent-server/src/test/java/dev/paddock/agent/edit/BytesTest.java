package dev.paddock.agent.edit;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Random;
import org.junit.jupiter.api.Test;

class BytesTest {
  @Test
  void countFindsEveryOccurrenceAtAnyOffsetAndLength() {
    Random random = new Random(11);
    byte[] bytes = new byte[300];
    random.nextBytes(bytes);
    for (int i = 0; i < bytes.length; i += 1 + random.nextInt(7)) {
      bytes[i] = '\n';
    }
    for (int from = 0; from < 20; from++) {
      for (int to = from; to <= bytes.length; to += 1 + from) {
        assertThat(Bytes.count(bytes, from, to, (byte) '\n'))
            .as("[%d, %d)", from, to)
            .isEqualTo(oneByOne(bytes, from, to, (byte) '\n'));
      }
    }
  }

  @Test
  void countTellsNegativeBytesApart() {
    byte[] bytes = {
      (byte) 0x8a, (byte) 0xff, 0x0a, (byte) 0x8a, 0, (byte) 0x8a, 1, 2, 3, (byte) 0x8a
    };
    assertThat(Bytes.count(bytes, 0, bytes.length, (byte) 0x8a)).isEqualTo(4);
    assertThat(Bytes.count(bytes, 0, bytes.length, (byte) '\n')).isEqualTo(1);
    assertThat(Bytes.count(bytes, 0, bytes.length, (byte) 0)).isEqualTo(1);
  }

  private static int oneByOne(byte[] bytes, int from, int to, byte value) {
    int n = 0;
    for (int i = from; i < to; i++) {
      n += bytes[i] == value ? 1 : 0;
    }
    return n;
  }
}
