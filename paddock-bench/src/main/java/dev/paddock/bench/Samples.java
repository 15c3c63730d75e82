package dev.paddock.bench;

import java.util.Arrays;

/** Durations measured one by one, in nanoseconds, and their percentiles. Not thread-safe. */
final class Samples {
  private final long[] nanos;
  private int count;

  Samples(int capacity) {
    this.nanos = new long[capacity];
  }

  void add(long durationNanos) {
    nanos[count++] = durationNanos;
  }

  int count() {
    return count;
  }

  /** The nearest-rank percentile ({@code p} in 0..100) in milliseconds. */
  double percentileMillis(double p) {
    if (count == 0) {
      throw new IllegalStateException("no samples");
    }
    long[] sorted = Arrays.copyOf(nanos, count);
    Arrays.sort(sorted);
    int rank = (int) Math.ceil(p / 100.0 * count);
    return sorted[Math.max(rank, 1) - 1] / 1e6;
  }
}
