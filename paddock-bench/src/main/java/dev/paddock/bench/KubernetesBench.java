package dev.paddock.bench;

import dev.paddock.api.SandboxSpec;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.backend.kubernetes.FakeKubelet;
import dev.paddock.backend.kubernetes.KubernetesBackendProvider;
import dev.paddock.backend.kubernetes.KubernetesTestCluster;
import dev.paddock.backend.process.ProcessBackendProvider;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The Kubernetes backend's own overhead: create → RUNNING through the backend against fabric8's
 * mock API server and the fake kubelet (<strong>not a real cluster</strong>: no scheduler, image
 * pull or container runtime, so what is left is the backend's API calls, its watch and probe, and
 * the fake's reaction), interleaved with the process backend starting the same agent with the same
 * JVM options, in the same run. The difference of the p50s is the figure (target ≤ 50 ms).
 *
 * <p>{@code --trace} times the steps of a few starts instead (the backend's, the fake kubelet's and
 * the mock server's TRACE lines, one clock): a timeline of each and the median of each step, next
 * to the process backend's starts in the same run. The tracing costs a little itself, so the
 * figures come from runs without it.
 *
 * <pre>
 * java -cp paddock-bench/target/benchmarks.jar dev.paddock.bench.KubernetesBench [--quick] [--json FILE] [--trace]
 * </pre>
 */
public final class KubernetesBench {
  private KubernetesBench() {}

  public static void main(String[] args) throws Exception {
    List<String> rest = new ArrayList<>(List.of(args));
    boolean trace = rest.remove("--trace");
    BenchOptions options =
        BenchOptions.parseOrExit(
            rest.toArray(String[]::new),
            "KubernetesBench [--quick] [--json FILE] [--trace]",
            false);
    Cleanup.around(cleanup -> run(options, trace, cleanup));
  }

  /**
   * Warm-up starts of each backend before a full run's timed ones ({@code
   * -Dpaddock.bench.warmups}).
   */
  private static final int WARMUPS = Integer.getInteger("paddock.bench.warmups", 10);

  /** Held so the setting stays: a logger without a strong reference may be collected. */
  private static final java.util.logging.Logger MOCK_LOG =
      java.util.logging.Logger.getLogger("io.fabric8.mockwebserver");

  private static void run(BenchOptions options, boolean trace, Cleanup cleanup) throws Exception {
    // The mock server logs every request it answers (two console lines each), which buried the
    // report; silencing it did not move the figures (201 ms overhead before, 209 ms after).
    MOCK_LOG.setLevel(java.util.logging.Level.WARNING);
    int starts = options.quick() ? 3 : 20;
    int warmups = options.quick() ? 1 : WARMUPS;
    String run = "bench-" + HexFormat.of().formatHex(SecureRandom.getSeed(4));
    System.out.println("paddock kubernetes bench" + (options.quick() ? " (--quick)" : ""));
    KubernetesTestCluster cluster = cleanup.register(KubernetesTestCluster.start());
    SandboxBackend kubernetes =
        cleanup.register(new KubernetesBackendProvider().create(cluster.settings(Map.of())));
    SandboxBackend process =
        cleanup.register(
            new ProcessBackendProvider()
                .create(
                    Map.of(
                        "paddock.data-dir",
                        cleanup.tempDir("paddock-bench-process-").toString(),
                        "agent.command",
                        ProcessBackendProvider.classPathAgentCommand())));
    SandboxSpec spec =
        SandboxSpec.builder("paddock/sandbox:bookworm").workingDir("/workspace").build();
    BenchSandboxes onKubernetes = new BenchSandboxes(kubernetes, spec, run + "-k", cleanup);
    BenchSandboxes onProcess =
        new BenchSandboxes(process, SandboxSpec.builder("process").build(), run + "-p", cleanup);

    // Warm-up: the first of each loads classes in this JVM and fills the page cache; the rest
    // bring the fabric8 clients, the mock and the fake kubelet to the compiled code a control
    // plane that has served a few starts runs (one warm-up left them interpreted: ~10 ms a
    // request).
    for (int i = 0; i < warmups; i++) {
      onKubernetes.destroy(onKubernetes.start(1000 + i));
      onProcess.destroy(onProcess.start(1000 + i));
    }
    if (trace) {
      traceStarts(options.quick() ? 2 : 5, onKubernetes, onProcess);
      return;
    }
    Samples k8s = new Samples(starts);
    Samples local = new Samples(starts);
    Parts parts = new Parts(starts);
    Samples k8sCpu = new Samples(starts);
    Samples localCpu = new Samples(starts);
    for (int i = 1; i <= starts; i++) {
      long cpu = benchCpuNanos();
      local.add(timedStart(onProcess, i));
      localCpu.add(benchCpuNanos() - cpu);
      cpu = benchCpuNanos();
      k8s.add(timedStart(onKubernetes, i, cluster.kubelet(), parts));
      k8sCpu.add(benchCpuNanos() - cpu);
    }
    if (!onKubernetes.left().isEmpty() || !onProcess.left().isEmpty()) {
      throw new IllegalStateException("sandboxes left after the bench");
    }
    Report report = new Report(context(options.quick(), starts, warmups));
    double k8sP50 = k8s.percentileMillis(50);
    double localP50 = local.percentileMillis(50);
    report.add(
        Figure.info(
            "create → RUNNING p50, kubernetes (mock + fake kubelet)",
            "ms",
            k8sP50,
            localP50,
            "process backend p50 (interleaved)"));
    report.add(
        Figure.info(
            "create → RUNNING p95, kubernetes (mock + fake kubelet)",
            "ms",
            k8s.percentileMillis(95),
            local.percentileMillis(95),
            "process backend p95"));
    report.add(
        Figure.of(
            "backend overhead p50 (kubernetes − process)",
            "ms",
            k8sP50 - localP50,
            localP50,
            "process backend p50",
            Figure.Target.atMost(50)));
    if (parts.announced.count() > 0) {
      parts.report(report, localP50);
    }
    report.add(
        Figure.info(
            "CPU of this JVM (mock, client, kubelet) per kubernetes start + destroy, p50",
            "ms",
            k8sCpu.percentileMillis(50),
            localCpu.percentileMillis(50),
            "per process start + destroy"));
    System.out.println();
    report.print(System.out);
    if (options.json().isPresent()) {
      report.writeJson(options.json().get());
    }
  }

  /** The steps of the step names below, by the first line of each (source, text prefix). */
  private static final List<List<String>> STEPS =
      List.of(
          List.of("backend", "created pod"),
          List.of("kubelet", "watch event ADDED"),
          List.of("kubelet", "spawned the agent"),
          List.of("kubelet", "status of pod"),
          List.of("backend", "pod of"),
          List.of("kubelet", "ready line"),
          List.of("backend", "agent of"),
          List.of("backend", "start of"));

  private static void traceStarts(int starts, BenchSandboxes onKubernetes, BenchSandboxes onProcess)
      throws Exception {
    Samples local = new Samples(starts);
    List<double[]> steps = new ArrayList<>();
    List<Integer> requests = new ArrayList<>();
    try (StartTrace trace = StartTrace.install()) {
      for (int i = 1; i <= starts; i++) {
        local.add(timedStart(onProcess, i));
        Instant t0 = Instant.now();
        BenchSandboxes.Sandbox s = onKubernetes.start(i);
        Instant t1 = Instant.now();
        onKubernetes.destroy(s);
        List<StartTrace.Line> lines = trace.between(t0, t1);
        System.out.printf(
            "%nstart %d, kubernetes: %.1f ms (lines stamped from the call)%n",
            i, java.time.Duration.between(t0, t1).toNanos() / 1e6);
        StartTrace.print(System.out, t0, lines);
        double[] at = new double[STEPS.size() + 1];
        for (int k = 0; k < STEPS.size(); k++) {
          at[k] =
              StartTrace.first(lines, STEPS.get(k).get(0), STEPS.get(k).get(1))
                  .map(l -> StartTrace.millis(t0, l))
                  .orElse(Double.NaN);
        }
        at[STEPS.size()] = java.time.Duration.between(t0, t1).toNanos() / 1e6;
        steps.add(at);
        requests.add((int) lines.stream().filter(l -> l.source().equals("mock")).count());
      }
    }
    System.out.printf("%nmedian of %d traced starts, ms from the start call:%n", starts);
    for (int k = 0; k <= STEPS.size(); k++) {
      int step = k;
      double[] values = steps.stream().mapToDouble(a -> a[step]).sorted().toArray();
      String name =
          step == STEPS.size()
              ? "returned"
              : STEPS.get(step).get(0) + ": " + STEPS.get(step).get(1);
      System.out.printf("  %-32s %8.1f%n", name, values[values.length / 2]);
    }
    System.out.printf(
        "  mock requests in the window: %s%n  process backend starts (same run): p50 %.1f ms%n",
        requests, local.percentileMillis(50));
  }

  /**
   * Where each Kubernetes start's time went, by the fake kubelet's stamps (its watch event, the
   * agent spawned, the agent's ready line read) between the call and the return: each part measured
   * per start, p50 over the starts (so the parts need not add up to the p50 total).
   */
  private static final class Parts {
    final Samples announced;
    final Samples reaction;
    final Samples agent;
    final Samples probe;
    final Samples backend;

    Parts(int starts) {
      announced = new Samples(starts);
      reaction = new Samples(starts);
      agent = new Samples(starts);
      probe = new Samples(starts);
      backend = new Samples(starts);
    }

    void add(long t0, FakeKubelet.StartTimes at, long t1) {
      announced.add(at.announced() - t0);
      reaction.add(at.spawned() - at.announced());
      agent.add(at.readyLine() - at.spawned());
      probe.add(t1 - at.readyLine());
      backend.add((at.announced() - t0) + (t1 - at.readyLine()));
    }

    void report(Report report, double processP50) {
      String base = "process backend create → RUNNING p50";
      report.add(
          Figure.info(
              "  call → the kubelet's watch event (the backend's creates)",
              "ms",
              announced.percentileMillis(50),
              processP50,
              base));
      report.add(
          Figure.info(
              "  watch event → agent spawned (the fake kubelet's own)",
              "ms",
              reaction.percentileMillis(50),
              processP50,
              base));
      report.add(
          Figure.info(
              "  agent spawned → its ready line (the agent JVM in the pod)",
              "ms",
              agent.percentileMillis(50),
              processP50,
              base));
      report.add(
          Figure.info(
              "  ready line → the start returns (the backend's probe)",
              "ms",
              probe.percentileMillis(50),
              processP50,
              base));
      report.add(
          Figure.info(
              "  the backend's own (call → event + ready line → return)",
              "ms",
              backend.percentileMillis(50),
              processP50,
              base));
    }
  }

  /** A Kubernetes start, with its parts when the fake kubelet ran it. */
  private static long timedStart(
      BenchSandboxes sandboxes, int n, Optional<FakeKubelet> kubelet, Parts parts)
      throws InterruptedException {
    long t0 = System.nanoTime();
    BenchSandboxes.Sandbox s = sandboxes.start(n);
    long t1 = System.nanoTime();
    // The agent may answer its probe a moment before the kubelet has read its ready line.
    Optional<FakeKubelet.StartTimes> at = Optional.empty();
    for (int tries = 0; kubelet.isPresent() && tries < 200; tries++) {
      at = kubelet.get().startTimes(s.handle().sandboxId()).filter(a -> a.readyLine() != 0);
      if (at.isPresent()) {
        break;
      }
      Thread.sleep(10);
    }
    sandboxes.destroy(s);
    at.ifPresent(a -> parts.add(t0, a, t1));
    return t1 - t0;
  }

  /**
   * CPU time used by this JVM so far, all threads: the mock API server, the fabric8 clients, the
   * fake kubelet and their JIT compiles share the machine's cores with the starting agent.
   */
  private static long benchCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean)
            java.lang.management.ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  private static long timedStart(BenchSandboxes sandboxes, int n) {
    long t0 = System.nanoTime();
    BenchSandboxes.Sandbox s = sandboxes.start(n);
    long took = System.nanoTime() - t0;
    sandboxes.destroy(s);
    return took;
  }

  private static Map<String, String> context(boolean quick, int starts, int warmups) {
    Map<String, String> context = new LinkedHashMap<>();
    context.put("java", Runtime.version().toString());
    context.put("cores", Integer.toString(Runtime.getRuntime().availableProcessors()));
    context.put("cluster", "fabric8 kubernetes-server-mock 8.0.0 (CRUD) + FakeKubelet, loopback");
    context.put("starts", starts + " each, interleaved, after " + warmups + " warm-up each");
    context.put("run", quick ? "quick" : "full");
    return context;
  }
}
