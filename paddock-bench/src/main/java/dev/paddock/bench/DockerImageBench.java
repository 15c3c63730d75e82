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
import java.util.List;
import java.util.Map;

/**
 * The cost of the default image's tools: Docker sandboxes on the default image ({@code
 * paddock/sandbox:bookworm}: Python, Node.js, build tools) beside the same sandboxes on the minimal
 * one ({@code paddock/sandbox:bookworm-minimal}), in one run, the starts interleaved so both see
 * the same machine load. Figures: each image's size and create → RUNNING (backend start and the
 * first {@code /alive} answered).
 *
 * <pre>
 * java -cp paddock-bench/target/benchmarks.jar dev.paddock.bench.DockerImageBench \
 *     [--quick] [--json FILE]   # PADDOCK_BENCH_IMAGE / PADDOCK_BENCH_BASELINE_IMAGE to change them
 * </pre>
 *
 * Both images must be present ({@code ./paddock docker-image} and {@code ./paddock docker-image
 * --minimal}). Host networking (loopback only). Every sandbox is removed on exit, also on failure.
 */
public final class DockerImageBench {
  private DockerImageBench() {}

  public static void main(String[] args) throws Exception {
    BenchOptions options =
        BenchOptions.parseOrExit(args, "DockerImageBench [--quick] [--json FILE]", false);
    Cleanup.around(cleanup -> run(options, cleanup));
  }

  private static void run(BenchOptions options, Cleanup cleanup) throws Exception {
    String image = System.getenv().getOrDefault("PADDOCK_BENCH_IMAGE", DockerBench.IMAGE);
    String minimal =
        System.getenv()
            .getOrDefault("PADDOCK_BENCH_BASELINE_IMAGE", "paddock/sandbox:bookworm-minimal");
    int starts = options.quick() ? 3 : 15;
    Checkout checkout = Checkout.find();
    Path dataDir = checkout.root().resolve("paddock-bench/target/docker-bench");
    String run = "imgbench-" + HexFormat.of().formatHex(SecureRandom.getSeed(4));
    DockerCli cli = new DockerCli();
    BenchSandboxes full = sandboxes(checkout, dataDir, image, run + "-full", cleanup);
    BenchSandboxes small = sandboxes(checkout, dataDir, minimal, run + "-min", cleanup);
    System.out.println("paddock docker image bench: " + image + " vs " + minimal);

    timedStart(full, -1, cleanup); // first-use costs (page cache, engine), not measured
    timedStart(small, -2, cleanup);
    Samples fullStart = new Samples(starts);
    Samples smallStart = new Samples(starts);
    for (int i = 0; i < starts; i++) {
      fullStart.add(timedStart(full, i, cleanup));
      smallStart.add(timedStart(small, i, cleanup));
    }

    Map<String, String> context = new LinkedHashMap<>();
    context.put("jdk", System.getProperty("java.vm.name") + " " + Runtime.version());
    context.put("cores", Integer.toString(Runtime.getRuntime().availableProcessors()));
    context.put("images", image + " vs " + minimal + ", host network, default limits");
    context.put(
        "run", (options.quick() ? "quick (smoke; do not publish)" : "full") + ", id " + run);
    Report report = new Report(context);
    report.add(
        Figure.info(
            "image size", "MB", megabytes(cli, image), megabytes(cli, minimal), "minimal image"));
    for (int p : new int[] {50, 95}) {
      report.add(
          Figure.info(
              "create → RUNNING, /alive 200 p" + p,
              "ms",
              fullStart.percentileMillis(p),
              smallStart.percentileMillis(p),
              "the same on the minimal image p" + p));
    }
    System.out.println();
    report.print(System.out);
    if (options.json().isPresent()) {
      report.writeJson(options.json().get());
    }
  }

  private static double megabytes(DockerCli cli, String image) throws Exception {
    List<String> size = cli.lines("image", "inspect", "-f", "{{.Size}}", image);
    return Long.parseLong(size.get(0).strip()) / 1e6;
  }

  private static BenchSandboxes sandboxes(
      Checkout checkout, Path dataDir, String image, String prefix, Cleanup cleanup) {
    Map<String, String> settings = new HashMap<>();
    settings.put("paddock.home", checkout.root().toString());
    settings.put("paddock.data-dir", dataDir.toString());
    settings.put("docker.network", "host"); // loopback only
    settings.put("docker.pull", "never");
    settings.put("docker.image", image);
    SandboxBackend backend = new DockerBackendProvider().create(settings);
    cleanup.register(backend::close);
    BenchSandboxes sandboxes =
        new BenchSandboxes(
            backend, SandboxSpec.builder(image).workingDir("/workspace").build(), prefix, cleanup);
    cleanup.register(() -> sandboxes.left().forEach(backend::destroy));
    return sandboxes;
  }

  private static long timedStart(BenchSandboxes sandboxes, int n, Cleanup cleanup)
      throws IOException {
    long start = System.nanoTime();
    BenchSandboxes.Sandbox sandbox = sandboxes.start(n);
    try (HttpConnection connection = HttpConnection.open(sandbox.port(), sandbox.key())) {
      AgentCalls.get(connection, "/alive");
    }
    long took = System.nanoTime() - start;
    sandboxes.destroy(sandbox);
    return took;
  }
}
