package dev.paddock.bench;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The figures taken on one agent that is already running: command round trips, session round trips,
 * concurrent commands, streaming throughput and memory, and {@code /health} under load.
 */
final class RunningAgentFigures {
  private static final byte[] TRUE = AgentCalls.commandBody("true", null);
  private static final byte[] TRUE_IN_SESSION = AgentCalls.commandBody("true", "bench");
  private static final long HEALTH_INTERVAL_MILLIS = 5;
  private static final long LOAD_RAMP_MILLIS = 300;

  private final AgentProcess agent;
  private final Baselines baselines;
  private final Plan plan;
  private final Report report;

  RunningAgentFigures(AgentProcess agent, Baselines baselines, Plan plan, Report report) {
    this.agent = agent;
    this.baselines = baselines;
    this.plan = plan;
    this.report = report;
  }

  void measureAll() throws Exception {
    commandRoundTrip();
    sessionRoundTrip();
    concurrentCommands();
    streaming();
    healthUnderLoad();
  }

  private void commandRoundTrip() throws Exception {
    Samples base = baselines.spawnTrue(plan.warmup(), plan.calls());
    Samples agentCalls = roundTrips(TRUE);
    String baseName = "ProcessBuilder /bin/true + waitFor";
    report.add(
        Figure.of(
            "`true` round trip p50",
            "ms",
            agentCalls.percentileMillis(50),
            base.percentileMillis(50),
            baseName + " p50",
            Figure.Target.atMost(2)));
    report.add(
        Figure.info(
            "`true` round trip p99",
            "ms",
            agentCalls.percentileMillis(99),
            base.percentileMillis(99),
            baseName + " p99"));
    Samples recipe = baselines.spawnAgentRecipe(plan.warmup(), plan.calls());
    report.add(
        Figure.info(
            "`setsid bash -c true` spawn p50, no agent",
            "ms",
            recipe.percentileMillis(50),
            base.percentileMillis(50),
            baseName + " p50"));
  }

  private void sessionRoundTrip() throws Exception {
    Samples base = baselines.shellPipe(plan.warmup(), plan.calls());
    Samples agentCalls = roundTrips(TRUE_IN_SESSION);
    String baseName = "running bash fed `true; echo x` over a pipe";
    report.add(
        Figure.of(
            "`true` in a session p50",
            "ms",
            agentCalls.percentileMillis(50),
            base.percentileMillis(50),
            baseName + " p50",
            Figure.Target.atMost(0.5)));
    report.add(
        Figure.info(
            "`true` in a session p99",
            "ms",
            agentCalls.percentileMillis(99),
            base.percentileMillis(99),
            baseName + " p99"));
  }

  private Samples roundTrips(byte[] body) throws IOException {
    try (HttpConnection connection = agent.connect()) {
      AgentCalls.executeChecked(connection, body);
      for (int i = 0; i < plan.warmup(); i++) {
        AgentCalls.execute(connection, body);
      }
      Samples samples = new Samples(plan.calls());
      for (int i = 0; i < plan.calls(); i++) {
        long start = System.nanoTime();
        AgentCalls.execute(connection, body);
        samples.add(System.nanoTime() - start);
      }
      return samples;
    }
  }

  private void concurrentCommands() throws Exception {
    int perClient = plan.concurrentPerClient();
    int warmup = Math.max(1, perClient / 10);
    double base = baselines.spawnTrueConcurrent(Plan.CLIENTS, perClient, warmup);
    double value =
        Throughput.perSecond(
            Plan.CLIENTS,
            perClient,
            warmup,
            () -> {
              HttpConnection connection = agent.connect();
              return new Throughput.Worker() {
                @Override
                public void once() throws IOException {
                  AgentCalls.execute(connection, TRUE);
                }

                @Override
                public void close() throws IOException {
                  connection.close();
                }
              };
            });
    report.add(
        Figure.of(
            Plan.CLIENTS + " clients running `true`",
            "cmd/s",
            value,
            base,
            Plan.CLIENTS + " threads spawning /bin/true",
            Figure.Target.atLeast(800)));
  }

  private void streaming() throws Exception {
    String pipeline = Plan.outputPipeline(plan.streamBytes());
    double base =
        Math.max(
            baselines.pipelineMiBPerSecond(pipeline, plan.streamBytes()),
            baselines.pipelineMiBPerSecond(pipeline, plan.streamBytes()));
    double rssBefore = agent.rssMiB();
    double first = streamMiBPerSecond(pipeline);
    double rssAfterFirst = agent.rssMiB();
    double second = streamMiBPerSecond(pipeline);
    double rssAfterSecond = agent.rssMiB();
    long mib = plan.streamBytes() / Plan.MIB;
    report.add(
        Figure.of(
            "stream " + mib + " MiB, best of 2",
            "MiB/s",
            Math.max(first, second),
            base,
            "same pipeline > /dev/null, best of 2",
            Figure.Target.atLeast(200)));
    String rssBase = "agent RSS before streaming";
    report.add(Figure.info("agent RSS before streaming", "MiB", rssBefore, rssBefore, rssBase));
    report.add(Figure.info("agent RSS after stream 1", "MiB", rssAfterFirst, rssBefore, rssBase));
    report.add(
        Figure.of(
            "agent RSS after stream 2",
            "MiB",
            rssAfterSecond,
            rssAfterFirst,
            "agent RSS after stream 1",
            // No growth from the second run: within 2 MiB of the first, allowing for page noise.
            Figure.Target.atMost(rssAfterFirst + 2)));
  }

  private double streamMiBPerSecond(String pipeline) throws IOException {
    try (HttpConnection connection = agent.connect()) {
      long start = System.nanoTime();
      long received = AgentCalls.stream(connection, pipeline);
      double seconds = (System.nanoTime() - start) / 1e9;
      if (received != plan.streamBytes()) {
        throw new IllegalStateException(
            "streamed " + received + " characters of stdout, expected " + plan.streamBytes());
      }
      return received / (double) Plan.MIB / seconds;
    }
  }

  private void healthUnderLoad() throws Exception {
    Samples idle = healthSamples();
    Samples loaded;
    String pipeline = Plan.outputPipeline(plan.loadStreamBytes());
    AtomicBoolean stop = new AtomicBoolean();
    CountDownLatch streaming = new CountDownLatch(Plan.CLIENTS);
    try (ExecutorService pool = Executors.newFixedThreadPool(Plan.CLIENTS)) {
      List<Future<?>> load = new ArrayList<>();
      for (int i = 0; i < Plan.CLIENTS; i++) {
        load.add(pool.submit(() -> streamUntil(stop, streaming, pipeline)));
      }
      try {
        streaming.await();
        Thread.sleep(LOAD_RAMP_MILLIS); // lets all streams get going before sampling
        loaded = healthSamples();
      } finally {
        stop.set(true);
      }
      for (Future<?> f : load) {
        f.get();
      }
    }
    report.add(
        Figure.of(
            "/health p95, " + Plan.CLIENTS + " streams running",
            "ms",
            loaded.percentileMillis(95),
            idle.percentileMillis(95),
            "/health p95 on the idle agent",
            Figure.Target.atMost(20)));
  }

  private Void streamUntil(AtomicBoolean stop, CountDownLatch started, String pipeline)
      throws IOException {
    started.countDown();
    try (HttpConnection connection = agent.connect()) {
      do {
        AgentCalls.stream(connection, pipeline);
      } while (!stop.get());
    }
    return null;
  }

  private Samples healthSamples() throws IOException, InterruptedException {
    try (HttpConnection connection = agent.connect()) {
      AgentCalls.get(connection, "/health");
      Samples samples = new Samples(plan.healthSamples());
      for (int i = 0; i < plan.healthSamples(); i++) {
        Thread.sleep(HEALTH_INTERVAL_MILLIS);
        long start = System.nanoTime();
        AgentCalls.get(connection, "/health");
        samples.add(System.nanoTime() - start);
      }
      return samples;
    }
  }
}
