package dev.paddock.hardening.load;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.PageRequest;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxStatus;
import dev.paddock.cli.ServerProcess;
import dev.paddock.client.PaddockClient;
import dev.paddock.hardening.load.Workload.Target;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * Load at a real {@code paddock server} (its own process: process backend, SQLite in a temporary
 * data dir, embedded defaults, the gateway on): N sandboxes created at once, then M checked
 * commands in each with C in flight at a time across all of them, through the gateway URL each
 * sandbox's {@code exposed_urls} names (or directly at the agents, {@code
 * -Dpaddock.load.path=direct}), while {@link HealthSampler} times {@code GET /health} every 50 ms,
 * and another times the same request at an idle JDK web server under the same load ({@link
 * FloorServer}: the machine's floor, reported beside the control plane's figure, not asserted).
 * With {@code -Dpaddock.soak.minutes=T} the same commands run in rounds for T minutes and the
 * control plane's memory is sampled every minute and must stay flat ({@link Flatness}).
 *
 * <p>Asserted: every answer exact (0 errors), every {@code /health} a 200 with its p95 under a
 * bound (on demand 20 ms, CI 250 ms) while the commands run, every sandbox RUNNING at the end;
 * after deleting them all, no agent process, cgroup or sandbox directory left (and {@link
 * ServerProcess}'s own leak checks after the test). Sizes: {@code paddock.load.sandboxes} (5),
 * {@code paddock.load.commands} per sandbox (20), {@code paddock.load.concurrency} (4): the CI
 * form; docs/RELIABILITY.md, "Load", has the on-demand one.
 */
class LoadTest {
  /**
   * The CI form's bound on {@code /health} p95 (a gross one: a health check stuck behind the store,
   * a lock or an exhausted pool, not a busy 2-core machine's scheduling); the on-demand form sets
   * issue 15's goal, 20 ms, with {@code -Dpaddock.load.health-p95-ms=20}.
   */
  private static final long CI_HEALTH_P95_MS = 250;

  @RegisterExtension final ServerProcess server = ServerProcess.measured();

  @TempDir Path scratch;

  @Test
  void sandboxesAnswerEveryCommandExactlyWhileHealthStaysFast() throws Exception {
    int sandboxes = Integer.getInteger("paddock.load.sandboxes", 5);
    int commands = Integer.getInteger("paddock.load.commands", 20);
    int concurrency = Integer.getInteger("paddock.load.concurrency", 4);
    boolean direct = "direct".equals(System.getProperty("paddock.load.path", "gateway"));
    Duration soak = Duration.ofMinutes(Long.getLong("paddock.soak.minutes", 0));
    Duration healthGoal =
        Duration.ofMillis(Long.getLong("paddock.load.health-p95-ms", CI_HEALTH_P95_MS));
    Duration samplePeriod = Duration.ofSeconds(Long.getLong("paddock.soak.sample-seconds", 60));

    // The server's own default reconcile period, not the harness's 1 s (made for crash tests).
    Map<String, String> settings = new HashMap<>(Map.of("PADDOCK_RECONCILE_SECONDS", "10"));
    if (direct) {
      settings.put("PADDOCK_GATEWAY", "off");
    }
    // JVM options of the control plane alone (its agents do not inherit them), for diagnosis:
    // e.g. -Dpaddock.load.server-jvm-options=-Xlog:gc:file=/tmp/cp-gc.log
    String serverJvm = System.getProperty("paddock.load.server-jvm-options", "");
    if (!serverJvm.isBlank()) {
      settings.put("JDK_JAVA_OPTIONS", serverJvm);
    }
    String url = server.start(settings);
    PaddockClient admin = PaddockClient.connect(URI.create(url), ServerProcess.ADMIN_KEY);
    ServerMemory memory = new ServerMemory(server.pid());
    ServerMemory.Sample before = memory.sample();

    Latencies createHealth = new Latencies();
    Latencies loadHealth = new Latencies();
    Latencies createFloor = new Latencies();
    Latencies loadFloor = new Latencies();
    Path floorDir = Files.createDirectories(scratch.resolve("floor"));
    Workload workload = new Workload(scratch);
    List<ServerMemory.Sample> samples = new ArrayList<>();
    long createNanos;
    long loadNanos;
    List<Target> targets;
    List<String> floorFailures;
    try (HealthSampler health = new HealthSampler(url, createHealth);
        FloorServer floor = FloorServer.start(floorDir);
        HealthSampler floorHealth = new HealthSampler("floor-sampler", floor.url(), createFloor);
        ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
      long started = System.nanoTime();
      targets = create(admin, sandboxes, threads, url, direct);
      createNanos = System.nanoTime() - started;

      health.phase(loadHealth);
      floorHealth.phase(loadFloor);
      started = System.nanoTime();
      long deadline = started + soak.toNanos();
      long nextSample = started + samplePeriod.toNanos();
      long round = 0;
      do {
        runRound(workload, targets, round * commands, commands, concurrency, threads);
        round++;
        if (!soak.isZero() && System.nanoTime() >= nextSample) {
          samples.add(memory.sample());
          System.out.printf("soak sample %d: %s%n", samples.size(), samples.getLast());
          nextSample += samplePeriod.toNanos();
        }
      } while (System.nanoTime() < deadline);
      loadNanos = System.nanoTime() - started;
      assertThat(health.failures()).as("failed /health answers").isEmpty();
      floorFailures = floorHealth.failures();
    }
    ServerMemory.Sample after = memory.sample();

    System.out.printf(
        "load figures: %d sandboxes (%s%s), %d commands each per round, %d in flight, %s;"
            + " created in %.1f s; %d commands in %.1f s = %.0f/s, %d errors;"
            + " command latency p50 %s p95 %s ms;"
            + " /health during create %s; /health during commands %s;"
            + " the floor (an idle jwebserver's GET /health, same run) during create %s,"
            + " during commands %s%s;"
            + " control plane RSS %d -> %d MiB, heap after GC %d -> %d MiB%n",
        sandboxes,
        direct ? "direct" : "gateway",
        serverJvm.isBlank() ? "" : ", control plane JVM " + serverJvm,
        commands,
        concurrency,
        soak.isZero() ? "one round" : "soak " + soak.toMinutes() + " min",
        createNanos / 1e9,
        workload.done(),
        loadNanos / 1e9,
        workload.done() / (loadNanos / 1e9),
        workload.errors(),
        Latencies.ms(workload.latencies().percentile(50)),
        Latencies.ms(workload.latencies().percentile(95)),
        createHealth.summary(),
        loadHealth.summary(),
        createFloor.summary(),
        loadFloor.summary(),
        floorFailures.isEmpty()
            ? ""
            : " (" + floorFailures.size() + " failed: " + floorFailures.getFirst() + ")",
        before.rssKib() >> 10,
        after.rssKib() >> 10,
        before.heapAfterGcKib() >> 10,
        after.heapAfterGcKib() >> 10);

    assertThat(workload.firstErrors()).as("%d errors, the first ones", workload.errors()).isEmpty();
    assertThat(workload.done()).isGreaterThanOrEqualTo((long) sandboxes * commands);
    assertThat(loadHealth.percentile(95))
        .as("/health p95 during the commands")
        .isLessThan(healthGoal);
    for (Target target : targets) {
      assertThat(admin.get(target.id()).map(SandboxInfo::status))
          .as("status of %s at the end", target.id())
          .contains(SandboxStatus.RUNNING);
    }
    if (!soak.isZero()) {
      Flatness.check(samples);
    }
    deleteAll(admin, targets);
  }

  /** Creates {@code count} sandboxes at once; returns them RUNNING with their agent clients. */
  private List<Target> create(
      PaddockClient admin, int count, ExecutorService threads, String url, boolean direct)
      throws Exception {
    List<Future<SandboxInfo>> created = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      created.add(
          threads.submit(() -> admin.create(Optional.empty(), true, Duration.ofMinutes(5))));
    }
    List<Target> targets = new ArrayList<>();
    for (Future<SandboxInfo> future : created) {
      SandboxInfo info = future.get(6, TimeUnit.MINUTES);
      assertThat(info.status())
          .as("status of %s after create", info.id())
          .isEqualTo(SandboxStatus.RUNNING);
      String agentUrl = info.agentServerUrl().orElseThrow();
      if (direct) {
        assertThat(agentUrl).doesNotStartWith(url);
      } else {
        assertThat(agentUrl).isEqualTo(url + "/sandboxes/" + info.id() + "/agent");
      }
      targets.add(new Target(info.id(), "", admin.agent(withKey(admin, info))));
    }
    List<Target> ready = new ArrayList<>();
    for (Target target : targets) {
      ready.add(prepare(target));
    }
    return ready;
  }

  /**
   * {@code info} with its session key. A create that waited must answer RUNNING with the key; one
   * that did not is a finding, and a fresh GET (which gives the owner the key while RUNNING) tells
   * whether the key was only missing from that reply or lost.
   */
  private static SandboxInfo withKey(PaddockClient admin, SandboxInfo info) {
    if (info.sessionApiKey().isPresent()) {
      return info;
    }
    Optional<SandboxInfo> again = admin.get(info.id());
    throw new AssertionError(
        "create of "
            + info.id()
            + " answered "
            + info.status()
            + " without its session key (detail "
            + info.statusDetail().orElse("none")
            + "); a GET then: "
            + again
                .map(
                    i ->
                        i.status()
                            + (i.sessionApiKey().isPresent() ? " with a key" : " without a key")
                            + ", detail "
                            + i.statusDetail().orElse("none"))
                .orElse("gone"));
  }

  /** Writes the sandbox's id into {@code .load-id} of its workspace, which every command reads. */
  private Target prepare(Target target) throws Exception {
    StringBuilder pwd = new StringBuilder();
    assertThat(
            target
                .agent()
                .exec(
                    "mkdir -p load && printf '%s' '" + target.id() + "' > .load-id && pwd",
                    30,
                    pwd::append,
                    s -> {}))
        .isZero();
    return new Target(target.id(), pwd.toString().trim(), target.agent());
  }

  /**
   * Commands {@code first} to {@code first + commands - 1} in every sandbox, interleaved across the
   * sandboxes, at most {@code concurrency} in flight.
   */
  private static void runRound(
      Workload workload,
      List<Target> targets,
      long first,
      int commands,
      int concurrency,
      ExecutorService threads)
      throws Exception {
    Semaphore inFlight = new Semaphore(concurrency);
    List<Future<?>> running = new ArrayList<>();
    for (long i = first; i < first + commands; i++) {
      for (Target target : targets) {
        inFlight.acquire();
        long command = i;
        running.add(
            threads.submit(
                () -> {
                  try {
                    workload.run(target, command);
                  } finally {
                    inFlight.release();
                  }
                }));
      }
    }
    for (Future<?> future : running) {
      future.get(10, TimeUnit.MINUTES);
    }
  }

  /** Deletes every sandbox at once, then checks that nothing of any is left on the machine. */
  private void deleteAll(PaddockClient admin, List<Target> targets) throws Exception {
    try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<?>> deletes = new ArrayList<>();
      for (Target target : targets) {
        deletes.add(threads.submit(() -> admin.delete(target.id())));
      }
      for (Future<?> delete : deletes) {
        delete.get(5, TimeUnit.MINUTES);
      }
    }
    assertThat(admin.list(PageRequest.first(100)).items())
        .as("sandboxes listed after deletes")
        .isEmpty();
    Path sandboxDirs = server.dataDir().resolve("sandboxes");
    Awaitility.await("nothing of the deleted sandboxes left")
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () -> {
              assertThat(server.labelledAgents()).as("agent processes left").isEmpty();
              assertThat(server.newCgroups()).as("cgroups left").isEmpty();
              if (Files.isDirectory(sandboxDirs)) {
                try (var left = Files.list(sandboxDirs)) {
                  assertThat(left.toList()).as("sandbox directories left").isEmpty();
                }
              }
            });
  }
}
