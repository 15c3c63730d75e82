package dev.paddock.bench;

import com.fasterxml.jackson.jr.ob.JSON;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Several control-plane replicas on one PostgreSQL (issue 14): two {@code paddock server} processes
 * from the built CLI jar, process backend, one shared sandboxes directory, a fresh schema in the
 * database {@code PADDOCK_TEST_POSTGRES_URL} names (dropped afterwards). N sandboxes are created at
 * once ({@code wait=true}, one client thread each), first all through replica A alone (the
 * baseline), then half through A and half through B; each round checks that every sandbox is
 * RUNNING on both replicas, that no id is duplicated or lost, and that exactly N agents run, then
 * deletes them all. Both replicas run their background work (reconcile every second), so the round
 * also shows that the non-starting replica never reaps or fails a sandbox the other one is
 * starting.
 *
 * <pre>
 * java -cp paddock-bench/target/benchmarks.jar dev.paddock.bench.ReplicasBench [--quick] [--json FILE]
 * </pre>
 *
 * {@code --quick}: 20 sandboxes instead of 100. {@code PADDOCK_BENCH_SANDBOXES} overrides N.
 */
public final class ReplicasBench {
  private static final String SECRET = "replicas-bench-master-secret-0123456789abcdef";

  private ReplicasBench() {}

  public static void main(String[] args) throws Exception {
    BenchOptions options =
        BenchOptions.parseOrExit(args, "ReplicasBench [--quick] [--json FILE]", false);
    Cleanup.around(cleanup -> run(options, cleanup));
  }

  private static void run(BenchOptions options, Cleanup cleanup) throws Exception {
    int count =
        Integer.parseInt(
            System.getenv()
                .getOrDefault("PADDOCK_BENCH_SANDBOXES", options.quick() ? "20" : "100"));
    Database db = Database.create();
    cleanup.register(db::drop);
    Path sandboxes = Files.createTempDirectory("paddock-replicas-bench-");
    cleanup.register(() -> Cleanup.deleteTree(sandboxes));
    Checkout checkout = Checkout.find();
    int a = replica(checkout, "a", db, sandboxes, cleanup).port();
    int b = replica(checkout, "b", db, sandboxes, cleanup).port();

    Map<String, String> context = new LinkedHashMap<>();
    context.put("sandboxes", Integer.toString(count));
    context.put("backend", "process, PostgreSQL store, 2 replicas");
    context.put("cores", Integer.toString(Runtime.getRuntime().availableProcessors()));
    context.put(
        "jdk", System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version"));
    Report report = new Report(context);

    Round alone = round(count, List.of(a), a, b, sandboxes);
    Round both = round(count, List.of(a, b), a, b, sandboxes);
    report.add(
        Figure.info(
            count + " concurrent creates → all RUNNING, through A and B",
            "s",
            both.seconds(),
            alone.seconds(),
            "the same " + count + " through replica A alone"));
    report.add(
        Figure.info(
            "per create, wall time / " + count,
            "ms",
            both.seconds() * 1000 / count,
            alone.seconds() * 1000 / count,
            "through A alone"));
    report.add(
        Figure.info(
            count + " sandboxes: total RSS of their agents",
            "MiB",
            both.agentsMiB(),
            alone.agentsMiB(),
            "through A alone"));
    report.print(System.out);
    if (options.json().isPresent()) {
      report.writeJson(options.json().get());
    }
  }

  /** One round's total time and its agents' memory at the end. */
  record Round(double seconds, double agentsMiB) {}

  private static Round round(int count, List<Integer> through, int a, int b, Path sandboxes)
      throws Exception {
    long began = System.nanoTime();
    List<String> ids = createAll(count, through);
    double seconds = (System.nanoTime() - began) / 1e9;
    checkAllRunning(ids, count, a, b);
    double agentsMiB = agentsMiB(sandboxes, count);
    deleteAll(ids, a, b);
    return new Round(seconds, agentsMiB);
  }

  private static List<String> createAll(int count, List<Integer> through) throws Exception {
    ExecutorService clients = Executors.newVirtualThreadPerTaskExecutor();
    try {
      List<Future<String>> created = new ArrayList<>();
      for (int i = 0; i < count; i++) {
        int port = through.get(i % through.size());
        created.add(
            clients.submit(
                () -> {
                  try (HttpConnection c = admin(port)) {
                    HttpConnection.Reply reply =
                        c.post("/api/v1/sandboxes?wait=true&timeout=600", new byte[0]);
                    ControlPlaneBench.require(reply, 200);
                    return ControlPlaneBench.id(reply);
                  }
                }));
      }
      List<String> ids = new ArrayList<>();
      for (Future<String> f : created) {
        ids.add(f.get());
      }
      return ids;
    } finally {
      clients.shutdownNow();
    }
  }

  /** Both replicas list exactly {@code ids}, each once, each RUNNING. */
  private static void checkAllRunning(List<String> ids, int count, int a, int b)
      throws IOException {
    if (new HashSet<>(ids).size() != count) {
      throw new IllegalStateException("duplicated ids among " + ids);
    }
    for (int port : List.of(a, b)) {
      Map<String, String> listed = listed(port);
      if (!listed.keySet().equals(new HashSet<>(ids))) {
        throw new IllegalStateException(
            "replica on port " + port + " lists " + listed.keySet() + ", created " + ids);
      }
      Set<String> notRunning = new HashSet<>();
      listed.forEach(
          (id, status) -> {
            if (!status.equals("RUNNING")) {
              notRunning.add(id + " " + status);
            }
          });
      if (!notRunning.isEmpty()) {
        throw new IllegalStateException("not RUNNING on port " + port + ": " + notRunning);
      }
    }
  }

  /** Every sandbox the replica on {@code port} lists, id → status, all pages. */
  private static Map<String, String> listed(int port) throws IOException {
    Map<String, String> found = new HashMap<>();
    Optional<String> page = Optional.empty();
    try (HttpConnection c = admin(port)) {
      do {
        HttpConnection.Reply reply =
            c.get("/api/v1/sandboxes/search?limit=100" + page.map(p -> "&page_id=" + p).orElse(""));
        ControlPlaneBench.require(reply, 200);
        Map<String, Object> body = JSON.std.mapFrom(reply.text());
        for (Object item : (List<?>) body.get("items")) {
          Map<?, ?> sandbox = (Map<?, ?>) item;
          if (found.put((String) sandbox.get("id"), (String) sandbox.get("status")) != null) {
            throw new IllegalStateException("listed twice: " + sandbox.get("id"));
          }
        }
        page = Optional.ofNullable((String) body.get("next_page_id"));
      } while (page.isPresent());
    }
    return found;
  }

  /**
   * Total RSS of the agents (processes naming the shared directory); fails unless {@code count}.
   */
  private static double agentsMiB(Path sandboxes, int count) throws IOException {
    double total = 0;
    int agents = 0;
    try (var procs = Files.list(Path.of("/proc"))) {
      for (Path proc : procs.filter(p -> p.getFileName().toString().matches("\\d+")).toList()) {
        try {
          String cmdline = Files.readString(proc.resolve("cmdline"), StandardCharsets.ISO_8859_1);
          if (cmdline.contains(sandboxes.toString()) && cmdline.contains("--ready-file")) {
            total += Rss.ofPid(Long.parseLong(proc.getFileName().toString()));
            agents++;
          }
        } catch (IOException e) {
          // Gone meanwhile, or not ours to read.
        }
      }
    }
    if (agents != count) {
      throw new IllegalStateException(agents + " agents run for " + count + " sandboxes");
    }
    return total;
  }

  private static void deleteAll(List<String> ids, int a, int b) throws IOException {
    try (HttpConnection ca = admin(a);
        HttpConnection cb = admin(b)) {
      for (int i = 0; i < ids.size(); i++) {
        // Deleted through the replica that did not start it where there are two.
        ControlPlaneBench.require(
            (i % 2 == 0 ? cb : ca).delete("/api/v1/sandboxes/" + ids.get(i)), 200);
      }
    }
  }

  private static HttpConnection admin(int port) throws IOException {
    return HttpConnection.open(port, "Authorization", "Bearer " + ControlPlaneBench.ADMIN_KEY);
  }

  private static ControlPlaneBench.Server replica(
      Checkout checkout, String name, Database db, Path sandboxes, Cleanup cleanup)
      throws IOException {
    Path data = Files.createTempDirectory("paddock-replicas-bench-" + name + "-");
    cleanup.register(() -> Cleanup.deleteTree(data));
    ProcessBuilder builder = checkout.paddockServer(data);
    Map<String, String> env = builder.environment();
    env.put("PADDOCK_ADMIN_KEY", ControlPlaneBench.ADMIN_KEY);
    env.put("PADDOCK_MASTER_SECRET", SECRET);
    env.put("PADDOCK_DATABASE_URL", db.url());
    env.put("PADDOCK_DATABASE_USER", db.user());
    env.put("PADDOCK_DATABASE_PASSWORD", db.password());
    env.put("PADDOCK_REPLICA_ID", "cp-" + name);
    env.put("PADDOCK_RECONCILE_SECONDS", "1");
    env.put("process.sandboxes-dir", sandboxes.toString());
    // 100 agent JVMs starting at once on a small machine each take far longer than alone.
    env.put("process.ready-timeout", "600s");
    env.put("PADDOCK_START_TIMEOUT_SECONDS", "600");
    return ControlPlaneBench.listening(builder, cleanup);
  }

  /** A fresh schema in the test database, dropped by {@link #drop()}. */
  record Database(String base, String schema, String user, String password) {
    static Database create() throws SQLException {
      String base = System.getenv("PADDOCK_TEST_POSTGRES_URL");
      if (base == null) {
        throw new IllegalStateException(
            "PADDOCK_TEST_POSTGRES_URL (and _USER, _PASSWORD) must name a PostgreSQL database, as"
                + " .ci/postgres.sh sets them");
      }
      Database db =
          new Database(
              base,
              "paddock_bench_" + Long.toHexString(ThreadLocalRandom.current().nextLong() >>> 1),
              System.getenv().getOrDefault("PADDOCK_TEST_POSTGRES_USER", ""),
              System.getenv().getOrDefault("PADDOCK_TEST_POSTGRES_PASSWORD", ""));
      db.execute("CREATE SCHEMA " + db.schema);
      return db;
    }

    String url() {
      return base + (base.contains("?") ? "&" : "?") + "currentSchema=" + schema;
    }

    void drop() {
      try {
        execute("DROP SCHEMA " + schema + " CASCADE");
      } catch (SQLException e) {
        throw new IllegalStateException("cannot drop schema " + schema, e);
      }
    }

    private void execute(String sql) throws SQLException {
      try (Connection c = DriverManager.getConnection(base, user, password);
          Statement s = c.createStatement()) {
        s.execute(sql);
      }
    }
  }
}
