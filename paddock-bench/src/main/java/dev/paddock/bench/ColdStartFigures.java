package dev.paddock.bench;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Cold start: from just before the agent process is started to the first 200 on {@code /alive}, and
 * its RSS once idle, over several fresh starts; with the AOT cache when the checkout has one, and
 * without it.
 */
final class ColdStartFigures {
  /** How long a freshly started agent idles before its RSS is read. */
  static final long SETTLE_MILLIS = 250;

  private final Checkout checkout;
  private final Baselines baselines;
  private final Cleanup cleanup;
  private final Plan plan;
  private final Report report;

  ColdStartFigures(
      Checkout checkout, Baselines baselines, Cleanup cleanup, Plan plan, Report report) {
    this.checkout = checkout;
    this.baselines = baselines;
    this.cleanup = cleanup;
    this.plan = plan;
    this.report = report;
  }

  void measureAll() throws Exception {
    Samples javaVersion = baselines.javaVersion(checkout, plan.coldStarts());
    double idleJvm = baselines.idleJvmRssMiB(checkout, plan.coldStarts(), SETTLE_MILLIS);
    if (checkout.aotCache().isPresent()) {
      series(true, javaVersion, idleJvm);
    }
    series(false, javaVersion, idleJvm);
  }

  /**
   * One series of starts. The targets apply to the production configuration, which has the AOT
   * cache the build trains; without it (a JDK other than the one that built) the figures are shown
   * for information.
   */
  private void series(boolean aot, Samples javaVersion, double idleJvm) throws Exception {
    String mode = aot ? "AOT cache" : "no AOT cache";
    Samples starts = new Samples(plan.coldStarts());
    List<Double> rss = new ArrayList<>();
    for (int i = 0; i < plan.coldStarts(); i++) {
      try (AgentProcess agent = AgentProcess.start(checkout, aot, cleanup)) {
        starts.add(firstAlive(agent) - agent.startNanos());
        Thread.sleep(SETTLE_MILLIS);
        rss.add(agent.rssMiB());
      }
    }
    double p50 = starts.percentileMillis(50);
    double baseline50 = javaVersion.percentileMillis(50);
    String startName = "cold start p50, " + mode;
    report.add(
        aot
            ? Figure.of(
                startName,
                "ms",
                p50,
                baseline50,
                "java -Xshare:auto -version p50",
                Figure.Target.atMost(200))
            : Figure.info(startName, "ms", p50, baseline50, "java -Xshare:auto -version p50"));
    report.add(
        Figure.info(
            "cold start p95, " + mode,
            "ms",
            starts.percentileMillis(95),
            javaVersion.percentileMillis(95),
            "java -Xshare:auto -version p95"));
    String rssName = "idle RSS after start, " + mode;
    double rssMiB = Baselines.median(rss);
    report.add(
        aot
            ? Figure.of(
                rssName,
                "MiB",
                rssMiB,
                idleJvm,
                "idle JVM, agent options, no app",
                Figure.Target.atMost(56))
            : Figure.info(rssName, "MiB", rssMiB, idleJvm, "idle JVM, agent options, no app"));
  }

  /** Sends the first {@code /alive} as soon as the agent says it listens; returns when 200 came. */
  static long firstAlive(AgentProcess agent) throws IOException {
    try (HttpConnection connection = agent.connect()) {
      AgentCalls.get(connection, "/alive");
      return System.nanoTime();
    }
  }
}
