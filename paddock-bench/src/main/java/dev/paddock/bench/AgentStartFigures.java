package dev.paddock.bench;

/**
 * The agent's own share of a Docker sandbox's create time: the agent the sandboxes run (the
 * bundle's jlink'd JRE, options, jar and AOT cache when it has one) started as a plain process on
 * the host, process start to first 200 on {@code /alive}, beside {@code java -Xshare:auto -version}
 * of the same JRE.
 */
final class AgentStartFigures {
  private final Checkout bundle;
  private final Cleanup cleanup;
  private final DockerFigures.Plan plan;
  private final Report report;

  AgentStartFigures(Checkout bundle, Cleanup cleanup, DockerFigures.Plan plan, Report report) {
    this.bundle = bundle;
    this.cleanup = cleanup;
    this.plan = plan;
    this.report = report;
  }

  void measureAll() throws Exception {
    System.out.println("agent start on the host with the bundle's JRE...");
    Samples javaVersion = new Baselines(cleanup).javaVersion(bundle, plan.agentStarts());
    Samples starts = new Samples(plan.agentStarts());
    for (int i = 0; i < plan.agentStarts(); i++) {
      try (AgentProcess agent = AgentProcess.start(bundle, true, cleanup)) {
        starts.add(ColdStartFigures.firstAlive(agent) - agent.startNanos());
      }
    }
    report.add(
        Figure.info(
            "bundle agent start on host p50, no container",
            "ms",
            starts.percentileMillis(50),
            javaVersion.percentileMillis(50),
            "bundle JRE java -Xshare:auto -version p50"));
  }
}
