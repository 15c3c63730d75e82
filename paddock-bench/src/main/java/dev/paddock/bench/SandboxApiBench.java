package dev.paddock.bench;

import dev.paddock.api.SandboxSettings;
import dev.paddock.api.SandboxStatus;
import dev.paddock.store.SandboxRecord;
import dev.paddock.store.SandboxStore;
import dev.paddock.store.SandboxStores;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Issue 9's figures, against {@code paddock server} (process backend, SQLite) as a separate
 * process: create with a JSON body (env, labels, resources) → RUNNING, beside create without one,
 * interleaved in the same run; and search with a label selector among 1,000 stored sandboxes (most
 * of them MISSING, as vanished or long-gone sandboxes are), beside {@code /alive} on the same
 * server and connection.
 *
 * <pre>
 * java -cp paddock-bench/target/benchmarks.jar dev.paddock.bench.SandboxApiBench [--quick] [--json FILE]
 * </pre>
 */
public final class SandboxApiBench {
  private static final byte[] BODY =
      """
      {"env": {"DATASET": "s3://bucket/train.csv", "MODE": "bench"},
       "labels": {"team": "ml", "run": "42", "paddock.dev/bench": "create"},
       "resources": {"cpus": 1, "memory": "1g", "pids": 512}}
      """
          .getBytes(StandardCharsets.UTF_8);
  private static final int STORED = 1_000;

  private SandboxApiBench() {}

  public static void main(String[] args) throws Exception {
    BenchOptions options =
        BenchOptions.parseOrExit(args, "SandboxApiBench [--quick] [--json FILE]", false);
    Cleanup.around(cleanup -> run(options.quick(), options.json(), cleanup));
  }

  private static void run(boolean quick, Optional<Path> json, Cleanup cleanup) throws Exception {
    Checkout checkout = Checkout.find();
    Map<String, String> context = new LinkedHashMap<>();
    context.put("run", quick ? "quick" : "full");
    context.put("backend", "process, SQLite store");
    context.put("cores", Integer.toString(Runtime.getRuntime().availableProcessors()));
    Report report = new Report(context);

    Path data = Files.createTempDirectory("paddock-api-bench-");
    cleanup.register(() -> Cleanup.deleteTree(data));
    fillStore(data);
    ControlPlaneBench.Server server = ControlPlaneBench.startServer(checkout, data, cleanup);

    int starts = quick ? 6 : 30;
    Samples plain = new Samples(starts);
    Samples withBody = new Samples(starts);
    try (HttpConnection c =
        HttpConnection.open(
            server.port(), "Authorization", "Bearer " + ControlPlaneBench.ADMIN_KEY)) {
      createAndDelete(c, new byte[0]); // warm-up of both paths
      createAndDelete(c, BODY);
      for (int i = 0; i < starts; i++) {
        plain.add(createAndDelete(c, new byte[0]));
        withBody.add(createAndDelete(c, BODY));
      }
      double overhead = withBody.percentileMillis(50) - plain.percentileMillis(50);
      report.add(
          Figure.info(
              "create with a body (env + labels + resources) → RUNNING p50",
              "ms",
              withBody.percentileMillis(50),
              plain.percentileMillis(50),
              "create without a body p50, interleaved"));
      report.add(
          Figure.of(
              "create-with-body overhead (p50 difference)",
              "ms",
              overhead,
              plain.percentileMillis(50),
              "create without a body p50",
              Figure.Target.atMost(10)));

      int queries = quick ? 300 : 2_000;
      Samples search = new Samples(queries);
      Samples alive = new Samples(queries);
      String path = "/api/v1/sandboxes/search?label=team%3Dml&label=shard%3D7&limit=100";
      for (int i = 0; i < 50; i++) {
        ControlPlaneBench.require(c.get(path), 200);
      }
      for (int i = 0; i < queries; i++) {
        long t = System.nanoTime();
        ControlPlaneBench.require(c.get(path), 200);
        search.add(System.nanoTime() - t);
        t = System.nanoTime();
        ControlPlaneBench.require(c.get("/alive"), 200);
        alive.add(System.nanoTime() - t);
      }
      report.add(
          Figure.of(
              "search with 2 label selectors among " + STORED + " stored sandboxes p50",
              "ms",
              search.percentileMillis(50),
              alive.percentileMillis(50),
              "GET /alive p50, same connection",
              Figure.Target.atMost(10)));
    }
    report.print(System.out);
    if (json.isPresent()) {
      report.writeJson(json.get());
    }
  }

  private static long createAndDelete(HttpConnection c, byte[] body) throws Exception {
    long t = System.nanoTime();
    HttpConnection.Reply reply = c.post("/api/v1/sandboxes?wait=true", body);
    long took = System.nanoTime() - t;
    ControlPlaneBench.require(reply, 200);
    ControlPlaneBench.require(c.delete("/api/v1/sandboxes/" + ControlPlaneBench.id(reply)), 200);
    return took;
  }

  /**
   * 1,000 sandboxes of the admin, as a long-used store holds them: all MISSING but 20 shards' worth
   * of labels spread over them ({@code team} ml or web, {@code shard} 0..19), so the selector
   * {@code team=ml,shard=7} matches 25.
   */
  private static void fillStore(Path data) {
    try (SandboxStore store = SandboxStores.openEmbedded(data)) {
      Instant t0 = Instant.now().minusSeconds(86_400);
      for (int i = 0; i < STORED; i++) {
        Map<String, String> labels =
            Map.of("team", i % 2 == 0 ? "ml" : "web", "shard", Integer.toString(i % 20));
        SandboxRecord record =
            new SandboxRecord(
                    "stored-" + i,
                    Optional.of("bench-admin"),
                    "process",
                    SandboxStatus.MISSING,
                    Optional.empty(),
                    Optional.empty(),
                    Optional.of("gone"),
                    t0.plusSeconds(i),
                    t0.plusSeconds(i),
                    0)
                .withSettings(SandboxSettings.NONE.withLabels(labels));
        store.insert(record);
      }
    }
  }
}
