package dev.paddock.hardening.load;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.function.ToLongFunction;

/**
 * Whether the control plane's memory stayed flat over a soak: the samples after {@link #WARM_UP}
 * are cut in thirds, and the last third's highest reading may exceed the first third's highest by
 * at most {@link #GROWTH} (and {@link #SLACK_KIB}, so a small heap's noise is not a leak).
 *
 * <p>Why 10 %: the load is the same every minute, so a control plane that keeps nothing per command
 * plateaus once its heap and caches are sized; a leak of even 1 KiB per command at the soak's ~100
 * commands a second grows 6 MiB a minute, 60 MiB across the two thirds apart of a 30-minute soak,
 * several times 10 % of a heap of tens of MiB. A tighter bound would flag the JVM's own sizing (a
 * resident set grows as the collector widens its young generation, and a heap after a full GC
 * varies by a few MiB with what was in flight at the moment of the GC).
 */
final class Flatness {
  static final int WARM_UP = 2;
  static final double GROWTH = 0.10;
  static final long SLACK_KIB = 4 << 10;

  private Flatness() {}

  static void check(List<ServerMemory.Sample> samples) {
    assertThat(samples.size())
        .as("memory samples (a soak needs %d after warm-up)", 3)
        .isGreaterThanOrEqualTo(WARM_UP + 3);
    List<ServerMemory.Sample> steady = samples.subList(WARM_UP, samples.size());
    flat(steady, ServerMemory.Sample::heapAfterGcKib, "heap after GC");
    flat(steady, ServerMemory.Sample::rssKib, "RSS");
  }

  private static void flat(
      List<ServerMemory.Sample> steady, ToLongFunction<ServerMemory.Sample> reading, String what) {
    int third = steady.size() / 3;
    long first = steady.subList(0, third).stream().mapToLong(reading).max().orElseThrow();
    long last =
        steady.subList(steady.size() - third, steady.size()).stream()
            .mapToLong(reading)
            .max()
            .orElseThrow();
    assertThat(last)
        .as("%s: last third's max vs first third's max (KiB) over %s", what, steady)
        .isLessThanOrEqualTo(Math.round(first * (1 + GROWTH)) + SLACK_KIB);
  }
}
