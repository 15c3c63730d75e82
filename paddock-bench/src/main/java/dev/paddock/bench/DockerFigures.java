package dev.paddock.bench;

import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.bench.BenchSandboxes.Sandbox;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.ToLongFunction;

/**
 * The Docker backend's figures, each beside the {@code docker} CLI doing the same on the same image
 * in the same run: create to a running agent, an exec round trip, pause and resume, and the idle
 * memory of a sandbox. The sandboxes of the create series stay up for the others and are destroyed
 * at the end, also on failure; so are the CLI's containers.
 */
final class DockerFigures {
  /** Idle time before the memory of idle sandboxes is read. */
  private static final long SETTLE_MILLIS = 3_000;

  private static final double MIB = 1024.0 * 1024.0;

  /**
   * How much to measure.
   *
   * @param creates sandboxes (and baseline containers) started one after another, kept for the
   *     memory figure
   * @param execWarmup agent exec round trips discarded first
   * @param execs agent exec round trips measured
   * @param cliExecs {@code docker exec} runs measured
   * @param cycles pause/resume cycles measured, for each of backend and CLI
   * @param agentStarts starts of the bundle's agent on the host
   */
  record Plan(
      boolean quick,
      int creates,
      int execWarmup,
      int execs,
      int cliExecs,
      int cycles,
      int agentStarts) {
    static Plan fullRun() {
      return new Plan(false, 20, 50, 200, 30, 20, 10);
    }

    static Plan smokeRun() {
      return new Plan(true, 3, 10, 30, 5, 3, 3);
    }
  }

  private final BenchSandboxes sandboxes;
  private final DockerCli cli;
  private final EngineSocket engine;
  private final String run;
  private final Plan plan;
  private final Report report;

  DockerFigures(
      BenchSandboxes sandboxes,
      DockerCli cli,
      EngineSocket engine,
      String run,
      Plan plan,
      Report report) {
    this.sandboxes = sandboxes;
    this.cli = cli;
    this.engine = engine;
    this.run = run;
    this.plan = plan;
    this.report = report;
  }

  void measureAll() throws Exception {
    List<Sandbox> started = new ArrayList<>();
    List<String> sleepers = new ArrayList<>();
    try {
      createFigures(started, sleepers);
      memoryFigures(started, sleepers);
      execFigures(started.getFirst(), sleepers.getFirst());
      pauseFigures(started.getLast(), sleepers.getLast());
    } finally {
      removeAll(started, sleepers);
    }
  }

  // ---------------------------------------------------------------- create

  private void createFigures(List<Sandbox> started, List<String> sleepers) throws Exception {
    System.out.println(
        "starting "
            + plan.creates()
            + " sandboxes, docker run containers and engine API containers, one after another...");
    warmUpCreate();
    Samples sandbox = new Samples(plan.creates());
    Samples dockerRun = new Samples(plan.creates());
    Samples engineCreate = new Samples(plan.creates());
    Samples engineStart = new Samples(plan.creates());
    for (int i = 0; i < plan.creates(); i++) {
      long start = System.nanoTime();
      started.add(startAnswering(i));
      sandbox.add(System.nanoTime() - start);
      start = System.nanoTime();
      sleepers.add(runSleeper());
      dockerRun.add(System.nanoTime() - start);
      start = System.nanoTime();
      String id = engine.createSleeper(DockerBench.IMAGE, DockerBench.RUN_LABEL, run);
      long created = System.nanoTime();
      engine.start(id);
      engineStart.add(System.nanoTime() - created);
      engineCreate.add(created - start);
      engine.remove(id);
    }
    String baseline = "docker run -d --network host sleep infinity";
    report.add(
        Figure.of(
            "create -> RUNNING, /alive 200 p50",
            "ms",
            sandbox.percentileMillis(50),
            dockerRun.percentileMillis(50),
            baseline + " p50",
            Figure.Target.atMost(600)));
    report.add(
        Figure.info(
            "create -> RUNNING, /alive 200 p95",
            "ms",
            sandbox.percentileMillis(95),
            dockerRun.percentileMillis(95),
            baseline + " p95"));
    report.add(
        Figure.info(
            "engine API create p50, sleep infinity",
            "ms",
            engineCreate.percentileMillis(50),
            dockerRun.percentileMillis(50),
            baseline + " p50"));
    report.add(
        Figure.info(
            "engine API start p50, sleep infinity",
            "ms",
            engineStart.percentileMillis(50),
            dockerRun.percentileMillis(50),
            baseline + " p50"));
  }

  /** One of each kind of start, not measured: first-use costs (page cache, engine caches). */
  private void warmUpCreate() throws Exception {
    sandboxes.destroy(startAnswering(-1));
    cli.run("rm", "-f", runSleeper());
    String id = engine.createSleeper(DockerBench.IMAGE, DockerBench.RUN_LABEL, run);
    engine.start(id);
    engine.remove(id);
  }

  /** Starts a sandbox and sends the first {@code /alive}; returns once it answered 200. */
  private Sandbox startAnswering(int n) throws IOException {
    Sandbox sandbox = sandboxes.start(n);
    try (HttpConnection connection = HttpConnection.open(sandbox.port(), sandbox.key())) {
      AgentCalls.get(connection, "/alive");
    }
    return sandbox;
  }

  /** {@code docker run -d} of an idle container of the same image; returns its full id. */
  private String runSleeper() throws Exception {
    List<String> lines =
        cli.run(
                "run",
                "-d",
                "--network",
                "host",
                "--label",
                DockerBench.RUN_LABEL + "=" + run,
                DockerBench.IMAGE,
                "sleep",
                "infinity")
            .lines()
            .toList();
    return lines.getLast().strip();
  }

  // ---------------------------------------------------------------- memory

  private void memoryFigures(List<Sandbox> started, List<String> sleepers) throws Exception {
    System.out.println("reading the memory cgroups of " + started.size() + " idle sandboxes...");
    Thread.sleep(SETTLE_MILLIS);
    List<CgroupMemory> sandbox = new ArrayList<>();
    for (Sandbox s : started) {
      sandbox.add(CgroupMemory.of(s.container()));
    }
    List<CgroupMemory> idle = new ArrayList<>();
    for (String id : sleepers) {
      idle.add(CgroupMemory.of(id));
    }
    String baseline = "idle sleep infinity container, mean of " + idle.size();
    report.add(
        Figure.info(
            "idle sandbox, cgroup usage, mean of " + sandbox.size(),
            "MiB",
            meanMiB(sandbox, CgroupMemory::usageBytes),
            meanMiB(idle, CgroupMemory::usageBytes),
            baseline));
    report.add(
        Figure.info(
            "idle sandbox, cgroup rss, mean of " + sandbox.size(),
            "MiB",
            meanMiB(sandbox, CgroupMemory::rssBytes),
            meanMiB(idle, CgroupMemory::rssBytes),
            baseline));
  }

  private static double meanMiB(List<CgroupMemory> values, ToLongFunction<CgroupMemory> field) {
    return values.stream().mapToLong(field).average().orElseThrow() / MIB;
  }

  // ---------------------------------------------------------------- exec

  private void execFigures(Sandbox sandbox, String sleeper) throws Exception {
    System.out.println("exec round trips through the agent and with docker exec...");
    byte[] body = AgentCalls.commandBody("true", null);
    Samples agent = new Samples(plan.execs());
    try (HttpConnection connection = HttpConnection.open(sandbox.port(), sandbox.key())) {
      for (int i = 0; i < plan.execWarmup() + plan.execs(); i++) {
        long start = System.nanoTime();
        AgentCalls.executeChecked(connection, body);
        if (i >= plan.execWarmup()) {
          agent.add(System.nanoTime() - start);
        }
      }
    }
    Samples docker = new Samples(plan.cliExecs());
    cli.run("exec", sleeper, "true");
    for (int i = 0; i < plan.cliExecs(); i++) {
      docker.add(cli.time("exec", sleeper, "true"));
    }
    double dockerP50 = docker.percentileMillis(50);
    report.add(
        Figure.of(
            "exec `true` via the agent p50",
            "ms",
            agent.percentileMillis(50),
            dockerP50,
            "docker exec <container> true p50 (target: 1/10)",
            Figure.Target.atMost(dockerP50 / 10)));
    report.add(
        Figure.info(
            "exec `true` via the agent p95",
            "ms",
            agent.percentileMillis(95),
            docker.percentileMillis(95),
            "docker exec <container> true p95"));
  }

  // ---------------------------------------------------------------- pause, resume

  private void pauseFigures(Sandbox sandbox, String sleeper) throws Exception {
    System.out.println("pause/resume cycles through the backend and with the docker CLI...");
    SandboxBackend backend = sandboxes.backend();
    RuntimeHandle handle = sandbox.handle();
    Samples pause = new Samples(plan.cycles());
    Samples resume = new Samples(plan.cycles());
    for (int i = -1; i < plan.cycles(); i++) {
      long start = System.nanoTime();
      backend.pause(handle);
      long paused = System.nanoTime();
      handle = backend.resume(handle);
      if (i >= 0) {
        pause.add(paused - start);
        resume.add(System.nanoTime() - paused);
      }
    }
    try (HttpConnection connection = HttpConnection.open(sandbox.port(), sandbox.key())) {
      AgentCalls.executeChecked(connection, AgentCalls.commandBody("true", null));
    }
    Samples dockerPause = new Samples(plan.cycles());
    Samples dockerUnpause = new Samples(plan.cycles());
    for (int i = -1; i < plan.cycles(); i++) {
      long paused = cli.time("pause", sleeper);
      long unpaused = cli.time("unpause", sleeper);
      if (i >= 0) {
        dockerPause.add(paused);
        dockerUnpause.add(unpaused);
      }
    }
    addPair("pause (backend.pause)", pause, dockerPause, "docker pause");
    addPair("resume, agent answering (backend.resume)", resume, dockerUnpause, "docker unpause");
  }

  private void addPair(String name, Samples value, Samples baseline, String baselineName) {
    for (int p : new int[] {50, 95}) {
      report.add(
          Figure.info(
              name + " p" + p,
              "ms",
              value.percentileMillis(p),
              baseline.percentileMillis(p),
              baselineName + " p" + p));
    }
  }

  // ---------------------------------------------------------------- cleanup

  /** Destroys every sandbox and container of the series; the first failure wins. */
  private void removeAll(List<Sandbox> started, List<String> sleepers) {
    RuntimeException first = null;
    List<Runnable> removals = new ArrayList<>();
    started.forEach(s -> removals.add(() -> sandboxes.destroy(s)));
    if (!sleepers.isEmpty()) {
      List<String> argv = new ArrayList<>(List.of("rm", "-f"));
      argv.addAll(sleepers);
      removals.add(() -> removeContainers(argv));
    }
    for (Runnable removal : removals) {
      try {
        removal.run();
      } catch (RuntimeException e) {
        if (first == null) {
          first = e;
        } else {
          first.addSuppressed(e);
        }
      }
    }
    if (first != null) {
      throw first;
    }
  }

  private void removeContainers(List<String> argv) {
    try {
      cli.run(argv.toArray(String[]::new));
    } catch (IOException e) {
      throw new IllegalStateException("docker rm failed: " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while removing containers", e);
    }
  }
}
