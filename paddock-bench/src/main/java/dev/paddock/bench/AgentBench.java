package dev.paddock.bench;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The end-to-end bench: starts the agent-server as a separate process, exactly as production does,
 * measures it over loopback, and prints every figure beside a baseline from the same run.
 *
 * <pre>
 * java -cp paddock-bench/target/benchmarks.jar dev.paddock.bench.AgentBench [--quick] [--json FILE]
 * </pre>
 *
 * Run from inside the checkout (it finds the repository by walking up to {@code mvnw}). Exit status
 * 0 when the run completed, whatever the figures; 2 for bad arguments; 1 when the bench failed.
 * Every process and temporary folder it made is removed on exit, also on failure or Ctrl-C. See
 * docs/BENCHMARKS.md for what each figure means.
 */
public final class AgentBench {
  private AgentBench() {}

  public static void main(String[] args) throws Exception {
    BenchOptions options =
        BenchOptions.parseOrExit(args, "AgentBench [--quick] [--json FILE]", false);
    Cleanup.around(cleanup -> run(options, cleanup));
  }

  private static void run(BenchOptions options, Cleanup cleanup) throws Exception {
    Checkout checkout = Checkout.find();
    Plan plan = options.quick() ? Plan.smokeRun() : Plan.fullRun();
    Report report = new Report(context(checkout, plan));
    Baselines baselines = new Baselines(cleanup);
    System.out.println("paddock agent bench" + (plan.quick() ? " (--quick: smoke run)" : ""));
    try (AgentProcess agent = AgentProcess.start(checkout, true, cleanup)) {
      new RunningAgentFigures(agent, baselines, plan, report).measureAll();
    }
    new ColdStartFigures(checkout, baselines, cleanup, plan, report).measureAll();
    System.out.println();
    report.print(System.out);
    if (options.json().isPresent()) {
      report.writeJson(options.json().get());
      System.out.println("figures written to " + options.json().get());
    }
  }

  private static Map<String, String> context(Checkout checkout, Plan plan) throws IOException {
    Map<String, String> context = new LinkedHashMap<>();
    context.put("jdk", System.getProperty("java.vm.name") + " " + Runtime.version());
    context.put("cores", Integer.toString(Runtime.getRuntime().availableProcessors()));
    context.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
    context.put(
        "aot cache",
        checkout
            .aotCache()
            .map(p -> "present (" + checkout.root().relativize(p) + "), used where marked")
            .orElse("absent: every agent ran without one"));
    context.put("agent jvm", String.join(" ", checkout.jvmOptionLines()));
    context.put("client", "raw HTTP/1.1 keep-alive socket client (one connection per thread)");
    context.put("run", plan.quick() ? "quick (smoke; do not publish)" : "full");
    return context;
  }
}
