package dev.paddock.bench;

/**
 * How much to measure. {@link #fullRun()} gives figures worth publishing; {@link #smokeRun()} is a
 * smoke run that only shows the bench works.
 *
 * @param warmup calls discarded before each latency series
 * @param calls calls measured in each latency series
 * @param concurrentPerClient calls per client in the concurrency figure
 * @param streamBytes bytes of output streamed per stream run
 * @param coldStarts agent starts per cold-start series
 * @param healthSamples {@code /health} calls per health series
 * @param loadStreamBytes bytes per stream command in the background load of the health figure
 */
record Plan(
    boolean quick,
    int warmup,
    int calls,
    int concurrentPerClient,
    long streamBytes,
    int coldStarts,
    int healthSamples,
    long loadStreamBytes) {

  static final int CLIENTS = 8;
  static final long MIB = 1L << 20;

  static Plan fullRun() {
    return new Plan(false, 300, 2000, 250, 200 * MIB, 10, 200, 16 * MIB);
  }

  static Plan smokeRun() {
    return new Plan(true, 30, 200, 25, 32 * MIB, 3, 40, 4 * MIB);
  }

  /** A shell pipeline writing exactly {@code bytes} bytes of 'a' to stdout. */
  static String outputPipeline(long bytes) {
    return "head -c " + bytes + " /dev/zero | tr '\\0' a";
  }
}
