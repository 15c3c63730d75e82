package dev.paddock.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The control plane's bench: starts {@code paddock server} (process backend, SQLite) as a separate
 * process from the built CLI jar and measures, each beside a baseline from the same run: create →
 * RUNNING with the agent answering (baseline: the agent's own cold start), RSS with 50 sandboxes
 * alive (baseline: one idle agent), and search / get-by-id throughput (baseline: {@code /alive} on
 * the same server).
 *
 * <pre>
 * java -cp paddock-bench/target/benchmarks.jar dev.paddock.bench.ControlPlaneBench [--quick] [--json FILE]
 * </pre>
 */
public final class ControlPlaneBench {
  static final String ADMIN_KEY = "pdk_bench-admin-key-0123456789abcdef0123456789";
  private static final Pattern LISTENING = Pattern.compile("listening on http://[^:]+:(\\d+)");
  private static final Pattern ID = Pattern.compile("\"id\":\"([^\"]+)\"");

  private ControlPlaneBench() {}

  public static void main(String[] args) throws Exception {
    BenchOptions options =
        BenchOptions.parseOrExit(args, "ControlPlaneBench [--quick] [--json FILE]", false);
    Cleanup.around(cleanup -> run(options.quick(), options.json(), cleanup));
  }

  private static void run(boolean quick, Optional<Path> json, Cleanup cleanup) throws Exception {
    Checkout checkout = Checkout.find();
    Map<String, String> context = new LinkedHashMap<>();
    context.put("run", quick ? "quick" : "full");
    context.put("backend", "process, SQLite store");
    context.put("cores", Integer.toString(Runtime.getRuntime().availableProcessors()));
    context.put(
        "jdk", System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version"));
    Report report = new Report(context);

    Samples agentStarts = new Samples(5);
    List<Double> agentRss = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      try (AgentProcess agent =
          AgentProcess.start(checkout, checkout.aotCache().isPresent(), cleanup)) {
        try (HttpConnection c = agent.connect()) {
          c.get("/alive");
        }
        agentStarts.add(System.nanoTime() - agent.startNanos());
        agentRss.add(agent.rssMiB());
      }
    }

    Path data = Files.createTempDirectory("paddock-cp-bench-");
    cleanup.register(() -> Cleanup.deleteTree(data));
    Server server = startServer(checkout, data, cleanup);
    int port = server.port();

    int starts = quick ? 5 : 20;
    Samples create = new Samples(starts);
    try (HttpConnection c = HttpConnection.open(port, "Authorization", "Bearer " + ADMIN_KEY)) {
      for (int i = 0; i < starts; i++) {
        long t = System.nanoTime();
        HttpConnection.Reply reply = c.post("/api/v1/sandboxes?wait=true", new byte[0]);
        create.add(System.nanoTime() - t);
        require(reply, 200);
        require(c.delete("/api/v1/sandboxes/" + id(reply)), 200);
      }
    }
    report.add(
        Figure.of(
            "create → RUNNING p50",
            "ms",
            create.percentileMillis(50),
            agentStarts.percentileMillis(50),
            "agent cold start p50 (process start → /alive)",
            Figure.Target.atMost(300)));
    report.add(
        Figure.info(
            "create → RUNNING p95",
            "ms",
            create.percentileMillis(95),
            agentStarts.percentileMillis(95),
            "agent cold start p95"));

    int alive = quick ? 10 : 50;
    List<String> ids = createMany(port, alive);
    double agents = 0;
    for (ProcessHandle child :
        ProcessHandle.of(server.pid()).orElseThrow().descendants().toList()) {
      try {
        agents += Rss.ofPid(child.pid());
      } catch (IOException e) {
        // Exited meanwhile (a short-lived command): not part of the steady state.
      }
    }
    double idleAgent = Baselines.median(agentRss);
    report.add(
        Figure.info(
            alive + " sandboxes: total RSS of their processes",
            "MiB",
            agents,
            idleAgent * alive,
            alive + " × one idle agent (measured above)"));
    report.add(
        Figure.info(
            "per sandbox RSS (agent JVM + its shells)",
            "MiB",
            agents / alive,
            idleAgent,
            "one idle agent"));
    report.add(
        Figure.info(
            "control plane RSS with " + alive + " sandboxes",
            "MiB",
            Rss.ofPid(server.pid()),
            idleAgent,
            "one idle agent"));

    int requests = quick ? 2_000 : 10_000;
    double aliveRps = throughput(port, "/alive", requests);
    report.add(
        Figure.of(
            "GET /api/v1/sandboxes/search (limit 100, " + alive + " RUNNING)",
            "req/s",
            throughput(port, "/api/v1/sandboxes/search?limit=100", requests),
            aliveRps,
            "GET /alive, same server, 8 clients",
            Figure.Target.atLeast(1000)));
    report.add(
        Figure.of(
            "GET /api/v1/sandboxes?id= (one RUNNING)",
            "req/s",
            throughput(port, "/api/v1/sandboxes?id=" + ids.get(0), requests),
            aliveRps,
            "GET /alive, same server, 8 clients",
            Figure.Target.atLeast(1000)));

    deleteMany(port, ids);
    report.print(System.out);
    if (json.isPresent()) {
      report.writeJson(json.get());
    }
  }

  record Server(ChildProcess child, int port) {
    long pid() {
      return child.pid();
    }
  }

  static Server startServer(Checkout checkout, Path data, Cleanup cleanup) throws IOException {
    ProcessBuilder builder = checkout.paddockServer(data);
    builder.environment().put("PADDOCK_ADMIN_KEY", ADMIN_KEY);
    builder.environment().put("PADDOCK_RECONCILE_SECONDS", "3600");
    return listening(builder, cleanup);
  }

  /** Starts {@code builder} and waits for its "listening on http://HOST:PORT" line. */
  static Server listening(ProcessBuilder builder, Cleanup cleanup) throws IOException {
    ChildProcess child = cleanup.register(new ChildProcess(builder.start()));
    BufferedReader lines =
        new BufferedReader(
            new InputStreamReader(child.process().getInputStream(), StandardCharsets.UTF_8));
    String line;
    while ((line = lines.readLine()) != null) {
      Matcher m = LISTENING.matcher(line);
      if (m.find()) {
        Thread drain = new Thread(() -> drain(lines), "server-output");
        drain.setDaemon(true);
        drain.start();
        return new Server(child, Integer.parseInt(m.group(1)));
      }
    }
    throw new IOException("paddock server exited before listening");
  }

  /** Reads the server's output until it ends (or is closed at shutdown); it is not a figure. */
  private static void drain(BufferedReader lines) {
    try {
      while (lines.readLine() != null) {
        // discarded
      }
    } catch (IOException e) {
      // the server is gone or its output was closed at shutdown
    }
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
                      HttpConnection.open(port, "Authorization", "Bearer " + ADMIN_KEY)) {
                    HttpConnection.Reply reply = c.post("/api/v1/sandboxes?wait=true", new byte[0]);
                    require(reply, 200);
                    return id(reply);
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

  private static void deleteMany(int port, List<String> ids) throws Exception {
    try (HttpConnection c = HttpConnection.open(port, "Authorization", "Bearer " + ADMIN_KEY)) {
      for (String id : ids) {
        require(c.delete("/api/v1/sandboxes/" + id), 200);
      }
    }
  }

  /** Requests per second of 8 keep-alive clients each sending {@code total / 8} GETs. */
  private static double throughput(int port, String path, int total) throws Exception {
    int clients = 8;
    int each = total / clients;
    ExecutorService pool = Executors.newFixedThreadPool(clients);
    CountDownLatch go = new CountDownLatch(1);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (int i = 0; i < clients; i++) {
        futures.add(
            pool.submit(
                () -> {
                  try (HttpConnection c =
                      HttpConnection.open(port, "Authorization", "Bearer " + ADMIN_KEY)) {
                    for (int w = 0; w < 50; w++) {
                      require(c.get(path), 200);
                    }
                    go.await();
                    for (int n = 0; n < each; n++) {
                      require(c.get(path), 200);
                    }
                  }
                  return null;
                }));
      }
      long t = System.nanoTime();
      go.countDown();
      for (Future<?> f : futures) {
        f.get();
      }
      return clients * each / ((System.nanoTime() - t) / 1e9);
    } finally {
      pool.shutdownNow();
    }
  }

  static void require(HttpConnection.Reply reply, int status) throws IOException {
    if (reply.status() != status) {
      throw new IOException(
          "expected HTTP " + status + ", got " + reply.status() + ": " + reply.text());
    }
  }

  static String id(HttpConnection.Reply reply) throws IOException {
    Matcher m = ID.matcher(reply.text());
    if (!m.find()) {
      throw new IOException("no sandbox id in " + reply.text());
    }
    return m.group(1);
  }
}
