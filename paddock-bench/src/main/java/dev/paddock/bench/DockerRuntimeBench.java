package dev.paddock.bench;

import dev.paddock.api.SandboxSpec;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.backend.docker.DockerBackendProvider;
import java.io.IOException;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The cost of gVisor: Docker sandboxes under {@code docker.runtime=<runsc runtime>} beside the same
 * sandboxes under the engine's default runtime (runc), in one run, the starts interleaved so both
 * see the same machine load. Figures: create → RUNNING (backend start and the first {@code /alive}
 * answered) and exec {@code true} through the agent.
 *
 * <pre>
 * java -cp paddock-bench/target/benchmarks.jar dev.paddock.bench.DockerRuntimeBench \
 *     [--quick] [--json FILE]   # PADDOCK_BENCH_RUNSC_RUNTIME, default runsc-hostnet
 * </pre>
 *
 * Host networking (loopback only), so the runsc runtime must be registered with {@code
 * --network=host} as well ({@code .ci/runsc.sh} registers {@code runsc-hostnet}). Every sandbox is
 * removed on exit, also on failure.
 */
public final class DockerRuntimeBench {
  private DockerRuntimeBench() {}

  public static void main(String[] args) throws Exception {
    BenchOptions options =
        BenchOptions.parseOrExit(args, "DockerRuntimeBench [--quick] [--json FILE]", false);
    Cleanup.around(cleanup -> run(options, cleanup));
  }

  private static void run(BenchOptions options, Cleanup cleanup) throws Exception {
    String runsc =
        System.getenv().getOrDefault("PADDOCK_BENCH_RUNSC_RUNTIME", "runsc-hostnet").strip();
    int starts = options.quick() ? 3 : 15;
    int execs = options.quick() ? 20 : 200;
    Checkout checkout = Checkout.find();
    Path dataDir = checkout.root().resolve("paddock-bench/target/docker-bench");
    String run = "rtbench-" + HexFormat.of().formatHex(SecureRandom.getSeed(4));
    BenchSandboxes runc = sandboxes(checkout, dataDir, Map.of(), run + "-runc", cleanup);
    BenchSandboxes gvisor =
        sandboxes(checkout, dataDir, Map.of("docker.runtime", runsc), run + "-runsc", cleanup);
    System.out.println("paddock docker runtime bench: runc vs " + runsc);

    startAnswering(runc, -1, cleanup); // first-use costs (page cache, engine), not measured
    startAnswering(gvisor, -1, cleanup);
    Samples runcStart = new Samples(starts);
    Samples runscStart = new Samples(starts);
    for (int i = 0; i < starts; i++) {
      runcStart.add(timedStart(runc, i, cleanup));
      runscStart.add(timedStart(gvisor, i, cleanup));
    }
    Samples runcExec = execs(startAnswering(runc, 1000, cleanup), execs);
    Samples runscExec = execs(startAnswering(gvisor, 1000, cleanup), execs);

    Map<String, String> context = new LinkedHashMap<>();
    context.put("jdk", System.getProperty("java.vm.name") + " " + Runtime.version());
    context.put("cores", Integer.toString(Runtime.getRuntime().availableProcessors()));
    context.put("image", DockerBench.IMAGE + ", host network, default limits");
    context.put("runtimes", "runc (engine default) vs docker.runtime=" + runsc);
    context.put(
        "run", (options.quick() ? "quick (smoke; do not publish)" : "full") + ", id " + run);
    Report report = new Report(context);
    pair(report, "create → RUNNING, /alive 200 (runsc)", runscStart, runcStart);
    pair(report, "exec `true` via the agent (runsc)", runscExec, runcExec);
    destroyAll(runc, gvisor);
    System.out.println();
    report.print(System.out);
    if (options.json().isPresent()) {
      report.writeJson(options.json().get());
    }
  }

  private static BenchSandboxes sandboxes(
      Checkout checkout, Path dataDir, Map<String, String> extra, String prefix, Cleanup cleanup) {
    Map<String, String> settings = new HashMap<>();
    settings.put("paddock.home", checkout.root().toString());
    settings.put("paddock.data-dir", dataDir.toString());
    settings.put("docker.network", "host"); // loopback only
    settings.put("docker.pull", "never");
    settings.put("docker.image", DockerBench.IMAGE);
    settings.putAll(extra);
    SandboxBackend backend = new DockerBackendProvider().create(settings);
    cleanup.register(backend::close);
    BenchSandboxes sandboxes =
        new BenchSandboxes(
            backend,
            SandboxSpec.builder(DockerBench.IMAGE).workingDir("/workspace").build(),
            prefix,
            cleanup);
    cleanup.register(() -> sandboxes.left().forEach(backend::destroy));
    return sandboxes;
  }

  private static long timedStart(BenchSandboxes sandboxes, int n, Cleanup cleanup)
      throws IOException {
    long start = System.nanoTime();
    BenchSandboxes.Sandbox sandbox = startAnswering(sandboxes, n, cleanup);
    long took = System.nanoTime() - start;
    sandboxes.destroy(sandbox);
    return took;
  }

  private static BenchSandboxes.Sandbox startAnswering(
      BenchSandboxes sandboxes, int n, Cleanup cleanup) throws IOException {
    BenchSandboxes.Sandbox sandbox = sandboxes.start(n);
    try (HttpConnection connection = HttpConnection.open(sandbox.port(), sandbox.key())) {
      AgentCalls.get(connection, "/alive");
    }
    return sandbox;
  }

  private static Samples execs(BenchSandboxes.Sandbox sandbox, int count) throws IOException {
    byte[] body = AgentCalls.commandBody("true", null);
    Samples samples = new Samples(count);
    try (HttpConnection connection = HttpConnection.open(sandbox.port(), sandbox.key())) {
      for (int i = 0; i < 20 + count; i++) {
        long start = System.nanoTime();
        AgentCalls.executeChecked(connection, body);
        if (i >= 20) {
          samples.add(System.nanoTime() - start);
        }
      }
    }
    return samples;
  }

  private static void pair(Report report, String name, Samples value, Samples baseline) {
    for (int p : new int[] {50, 95}) {
      report.add(
          Figure.info(
              name + " p" + p,
              "ms",
              value.percentileMillis(p),
              baseline.percentileMillis(p),
              "the same under runc p" + p));
    }
  }

  private static void destroyAll(BenchSandboxes... all) {
    for (BenchSandboxes sandboxes : all) {
      sandboxes.left().forEach(sandboxes.backend()::destroy);
    }
  }
}
