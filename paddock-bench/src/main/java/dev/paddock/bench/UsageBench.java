package dev.paddock.bench;

import dev.paddock.api.SandboxStatus;
import dev.paddock.store.SandboxRecord;
import dev.paddock.store.SandboxStore;
import dev.paddock.store.SandboxStores;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Issue 13's usage figures, against {@code paddock server} (process backend, SQLite, per-sandbox
 * metrics on) as a separate process: {@code GET /api/v1/sandboxes/{id}/stats} over 50 RUNNING
 * sandboxes (real agent processes) beside {@code GET /api/v1/sandboxes/{id}} of the same sandboxes
 * on the same connection; and a {@code /metrics} scrape with 200 sandboxes in the store beside
 * {@code /alive}. By default 50 of the 200 are real running agents and 150 are stored records of
 * long-gone (MISSING) sandboxes; {@code --large} runs 200 real agents.
 *
 * <pre>
 * java -cp paddock-bench/target/benchmarks.jar dev.paddock.bench.UsageBench [--quick] [--large] [--json FILE]
 * </pre>
 */
public final class UsageBench {
  private static final int STATS_SANDBOXES = 50;
  private static final int SCRAPE_SANDBOXES = 200;
  private static final Pattern SERIES =
      Pattern.compile("^paddock_sandbox_memory_bytes\\{", Pattern.MULTILINE);

  private UsageBench() {}

  public static void main(String[] args) throws Exception {
    BenchOptions options =
        BenchOptions.parseOrExit(args, "UsageBench [--quick] [--large] [--json FILE]", true);
    Cleanup.around(cleanup -> run(options, cleanup));
  }

  private static void run(BenchOptions options, Cleanup cleanup) throws Exception {
    int agents = options.large() ? SCRAPE_SANDBOXES : STATS_SANDBOXES;
    Map<String, String> context = new LinkedHashMap<>();
    context.put("run", options.quick() ? "quick" : "full");
    context.put("backend", "process, SQLite store, PADDOCK_METRICS_PER_SANDBOX=true");
    context.put("cores", Integer.toString(Runtime.getRuntime().availableProcessors()));
    context.put(
        "sandboxes",
        agents + " running agents + " + (SCRAPE_SANDBOXES - agents) + " stored MISSING records");
    Report report = new Report(context);

    Path data = Files.createTempDirectory("paddock-usage-bench-");
    cleanup.register(() -> Cleanup.deleteTree(data));
    fillStore(data, SCRAPE_SANDBOXES - agents);
    ProcessBuilder builder = Checkout.find().paddockServer(data);
    builder.environment().put("PADDOCK_ADMIN_KEY", ControlPlaneBench.ADMIN_KEY);
    builder.environment().put("PADDOCK_RECONCILE_SECONDS", "3600");
    builder.environment().put("PADDOCK_METRICS_PER_SANDBOX", "true");
    ControlPlaneBench.Server server = ControlPlaneBench.listening(builder, cleanup);

    List<String> ids = createMany(server.port(), agents);
    try (HttpConnection c =
        HttpConnection.open(
            server.port(), "Authorization", "Bearer " + ControlPlaneBench.ADMIN_KEY)) {
      statsFigure(c, ids.subList(0, STATS_SANDBOXES), options.quick(), report);
      scrapeFigure(c, agents, options.quick(), report);
      for (String id : ids) {
        ControlPlaneBench.require(c.delete("/api/v1/sandboxes/" + id), 200);
      }
    }
    report.print(System.out);
    if (options.json().isPresent()) {
      report.writeJson(options.json().get());
    }
  }

  private static void statsFigure(HttpConnection c, List<String> ids, boolean quick, Report report)
      throws Exception {
    int rounds = quick ? 4 : 20;
    Samples stats = new Samples(rounds * ids.size());
    Samples get = new Samples(rounds * ids.size());
    for (String id : ids) { // warm-up
      ControlPlaneBench.require(c.get("/api/v1/sandboxes/" + id + "/stats"), 200);
      ControlPlaneBench.require(c.get("/api/v1/sandboxes/" + id), 200);
    }
    for (int round = 0; round < rounds; round++) {
      for (String id : ids) {
        long t = System.nanoTime();
        ControlPlaneBench.require(c.get("/api/v1/sandboxes/" + id + "/stats"), 200);
        stats.add(System.nanoTime() - t);
        t = System.nanoTime();
        ControlPlaneBench.require(c.get("/api/v1/sandboxes/" + id), 200);
        get.add(System.nanoTime() - t);
      }
    }
    report.add(
        Figure.of(
            "GET /stats of " + ids.size() + " running sandboxes p50",
            "ms",
            stats.percentileMillis(50),
            get.percentileMillis(50),
            "GET /api/v1/sandboxes/{id} p50, same sandboxes and connection",
            Figure.Target.atMost(20)));
    report.add(
        Figure.info(
            "GET /stats of " + ids.size() + " running sandboxes p95",
            "ms",
            stats.percentileMillis(95),
            get.percentileMillis(95),
            "GET /api/v1/sandboxes/{id} p95"));
  }

  private static void scrapeFigure(HttpConnection c, int running, boolean quick, Report report)
      throws Exception {
    int scrapes = quick ? 10 : 100;
    Samples scrape = new Samples(scrapes);
    Samples alive = new Samples(scrapes);
    HttpConnection.Reply first = c.get("/metrics");
    ControlPlaneBench.require(first, 200);
    String text = new String(first.body(), StandardCharsets.UTF_8);
    int series = count(text);
    if (series != running) {
      throw new IllegalStateException(
          "expected memory series for " + running + " sandboxes, found " + series);
    }
    for (int i = 0; i < scrapes; i++) {
      long t = System.nanoTime();
      ControlPlaneBench.require(c.get("/metrics"), 200);
      scrape.add(System.nanoTime() - t);
      t = System.nanoTime();
      ControlPlaneBench.require(c.get("/alive"), 200);
      alive.add(System.nanoTime() - t);
    }
    report.add(
        Figure.of(
            "/metrics scrape, " + SCRAPE_SANDBOXES + " sandboxes (" + running + " with series) p50",
            "ms",
            scrape.percentileMillis(50),
            alive.percentileMillis(50),
            "GET /alive p50, same connection",
            Figure.Target.atMost(50)));
    report.add(
        Figure.info("/metrics scrape size", "KiB", text.length() / 1024.0, 0, "(no baseline)"));
  }

  private static int count(String text) {
    Matcher m = SERIES.matcher(text);
    int n = 0;
    while (m.find()) {
      n++;
    }
    return n;
  }

  private static List<String> createMany(int port, int count) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(4);
    try {
      List<Future<String>> futures = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        futures.add(
            pool.submit(
                () -> {
                  try (HttpConnection c =
                      HttpConnection.open(
                          port, "Authorization", "Bearer " + ControlPlaneBench.ADMIN_KEY)) {
                    HttpConnection.Reply reply = c.post("/api/v1/sandboxes?wait=true", new byte[0]);
                    ControlPlaneBench.require(reply, 200);
                    return ControlPlaneBench.id(reply);
                  }
                }));
      }
      List<String> ids = new ArrayList<>();
      for (Future<String> f : futures) {
        ids.add(f.get());
      }
      return ids;
    } finally {
      pool.shutdownNow();
    }
  }

  /** {@code count} records of long-gone sandboxes, as a store in use for a while holds them. */
  private static void fillStore(Path data, int count) {
    try (SandboxStore store = SandboxStores.openEmbedded(data)) {
      Instant t0 = Instant.now().minusSeconds(86_400);
      for (int i = 0; i < count; i++) {
        store.insert(
            new SandboxRecord(
                "gone-" + i,
                Optional.of("bench-admin"),
                "process",
                SandboxStatus.MISSING,
                Optional.empty(),
                Optional.empty(),
                Optional.of("gone"),
                t0.plusSeconds(i),
                t0.plusSeconds(i),
                0));
      }
    }
  }
}
