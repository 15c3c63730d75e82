package dev.paddock.bench;

import java.util.Optional;

/**
 * One measured figure beside its baseline from the same run.
 *
 * @param name what was measured
 * @param unit unit of {@code value} and {@code baseline}
 * @param value the measurement
 * @param baseline the reference the value is read against, same unit
 * @param baselineName what the baseline is (docs/BENCHMARKS.md says more)
 * @param target the goal, when the figure has one
 */
record Figure(
    String name,
    String unit,
    double value,
    double baseline,
    String baselineName,
    Optional<Target> target) {

  /** A goal: at most or at least {@code limit}, in the figure's unit. */
  record Target(boolean atMost, double limit) {
    static Target atMost(double limit) {
      return new Target(true, limit);
    }

    static Target atLeast(double limit) {
      return new Target(false, limit);
    }

    boolean metBy(double value) {
      return atMost ? value <= limit : value >= limit;
    }
  }

  /** A figure with a goal. */
  static Figure of(
      String name, String unit, double value, double baseline, String baselineName, Target t) {
    return new Figure(name, unit, value, baseline, baselineName, Optional.of(t));
  }

  /** A figure shown for information, without a goal. */
  static Figure info(String name, String unit, double value, double baseline, String baselineName) {
    return new Figure(name, unit, value, baseline, baselineName, Optional.empty());
  }

  /** value ÷ baseline: how many times the baseline this figure is. */
  double ratio() {
    return baseline == 0 ? Double.NaN : value / baseline;
  }

  /** "PASS", "MISS", or "info" for a figure without a target. */
  String verdict() {
    return target.map(t -> t.metBy(value) ? "PASS" : "MISS").orElse("info");
  }
}
