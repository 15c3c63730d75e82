package dev.paddock.hardening.load;

import java.time.Duration;
import java.util.Arrays;

/** Durations recorded from many threads, summarised as nearest-rank percentiles. */
final class Latencies {
  private long[] nanos = new long[1024];
  private int size;

  synchronized void add(long elapsedNanos) {
    if (size == nanos.length) {
      nanos = Arrays.copyOf(nanos, size * 2);
    }
    nanos[size++] = elapsedNanos;
  }

  synchronized int count() {
    return size;
  }

  /** The {@code p}-th percentile (0 < p ≤ 100); zero when nothing was recorded. */
  synchronized Duration percentile(double p) {
    if (size == 0) {
      return Duration.ZERO;
    }
    long[] sorted = Arrays.copyOf(nanos, size);
    Arrays.sort(sorted);
    int rank = (int) Math.ceil(p / 100 * size);
    return Duration.ofNanos(sorted[Math.max(0, rank - 1)]);
  }

  /** {@code p50/p95/p99/max} in milliseconds, for the figures line. */
  String summary() {
    return String.format(
        "p50 %s p95 %s p99 %s max %s ms (%d samples)",
        ms(percentile(50)), ms(percentile(95)), ms(percentile(99)), ms(percentile(100)), count());
  }

  static String ms(Duration d) {
    return String.format("%.2f", d.toNanos() / 1e6);
  }
}
