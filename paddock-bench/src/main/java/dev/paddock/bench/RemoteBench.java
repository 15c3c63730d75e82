package dev.paddock.bench;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * {@code RUNTIME=remote} against the process backend, all from the built CLI jar in one run: two
 * {@code paddock runtime-api} processes (process backend under each), a {@code paddock server} with
 * {@code RUNTIME=remote} over both, and a {@code paddock server} with the process backend. Measures
 * create → RUNNING through each server, interleaved one for one (the overhead of the runtime-API
 * hop), then starts 50 sandboxes through the remote server 4 at a time and counts where they went
 * and that all of them run.
 *
 * <pre>
 * java -cp paddock-bench/target/benchmarks.jar dev.paddock.bench.RemoteBench [--quick] [--json FILE]
 * </pre>
 */
public final class RemoteBench {
  private static final String KEY_PREFIX = "bench-runtime-api-key-";
  private static final Pattern SANDBOXES = Pattern.compile("\"sandboxes\":(\\d+)");
  private static final Pattern RUNNING = Pattern.compile("\"status\":\"RUNNING\"");

  private RemoteBench() {}

  public static void main(String[] args) throws Exception {
    BenchOptions options =
        BenchOptions.parseOrExit(args, "RemoteBench [--quick] [--json FILE]", false);
    Cleanup.around(cleanup -> run(options.quick(), options.json(), cleanup));
  }

  private static void run(boolean quick, Optional<Path> json, Cleanup cleanup) throws Exception {
    Checkout checkout = Checkout.find();
    Map<String, String> context = new LinkedHashMap<>();
    context.put("run", quick ? "quick" : "full");
    context.put("backends", "remote over 2 runtime APIs (process under each) vs process");
    context.put("cores", Integer.toString(Runtime.getRuntime().availableProcessors()));
    context.put(
        "jdk", System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version"));
    Report report = new Report(context);

    List<ControlPlaneBench.Server> apis = new ArrayList<>();
    StringBuilder runtimes = new StringBuilder();
    for (int i = 0; i < 2; i++) {
      ControlPlaneBench.Server api = runtimeApi(checkout, cleanup, KEY_PREFIX + i);
      apis.add(api);
      runtimes.append(i == 0 ? "" : ",");
      runtimes.append("http://127.0.0.1:").append(api.port()).append('=').append(KEY_PREFIX + i);
    }
    ControlPlaneBench.Server remote =
        server(
            checkout,
            cleanup,
            Map.of("RUNTIME", "remote", "PADDOCK_REMOTE_RUNTIMES", runtimes.toString()));
    ControlPlaneBench.Server process = server(checkout, cleanup, Map.of("RUNTIME", "process"));

    int starts = quick ? 5 : 20;
    Samples remoteStarts = new Samples(starts);
    Samples processStarts = new Samples(starts);
    for (int i = 0; i < starts; i++) {
      remoteStarts.add(createAndDelete(remote.port()));
      processStarts.add(createAndDelete(process.port()));
    }
    double remoteP50 = remoteStarts.percentileMillis(50);
    double processP50 = processStarts.percentileMillis(50);
    report.add(
        Figure.info(
            "create → RUNNING p50, RUNTIME=remote",
            "ms",
            remoteP50,
            processP50,
            "create → RUNNING p50, process backend directly (interleaved)"));
    report.add(
        Figure.of(
            "create → RUNNING overhead p50 (remote − process)",
            "ms",
            remoteP50 - processP50,
            processP50,
            "process backend p50",
            Figure.Target.atMost(50)));

    int count = quick ? 10 : 50;
    List<String> ids = createMany(remote.port(), count);
    int[] placed = new int[apis.size()];
    for (int i = 0; i < apis.size(); i++) {
      placed[i] = held(apis.get(i).port(), KEY_PREFIX + i);
    }
    int running = running(remote.port());
    report.add(
        Figure.of(
            count
                + " sandboxes over 2 runtime APIs: placement imbalance |a − b| ("
                + placed[0]
                + " / "
                + placed[1]
                + ")",
            "sandboxes",
            Math.abs(placed[0] - placed[1]),
            count,
            "sandboxes started",
            Figure.Target.atMost(1)));
    report.add(
        Figure.of(
            count + " sandboxes: lost (started − RUNNING)",
            "sandboxes",
            count - Math.min(running, placed[0] + placed[1]),
            count,
            "sandboxes started",
            Figure.Target.atMost(0)));

    for (String id : ids) {
      try (HttpConnection c = admin(remote.port())) {
        ControlPlaneBench.require(c.delete("/api/v1/sandboxes/" + id), 200);
      }
    }
    report.print(System.out);
    if (json.isPresent()) {
      report.writeJson(json.get());
    }
  }

  private static ControlPlaneBench.Server runtimeApi(Checkout checkout, Cleanup cleanup, String key)
      throws Exception {
    Path data = Files.createTempDirectory("paddock-remote-bench-api-");
    cleanup.register(() -> Cleanup.deleteTree(data));
    ProcessBuilder builder = checkout.paddockServer(data);
    List<String> argv = builder.command();
    argv.set(argv.indexOf("server"), "runtime-api");
    builder.environment().put("PADDOCK_RUNTIME_API_PORT", "0");
    builder.environment().put("PADDOCK_RUNTIME_API_KEY", key);
    builder.environment().put("PADDOCK_RUNTIME_API_MAX_SANDBOXES", "60");
    return ControlPlaneBench.listening(builder, cleanup);
  }

  private static ControlPlaneBench.Server server(
      Checkout checkout, Cleanup cleanup, Map<String, String> env) throws Exception {
    Path data = Files.createTempDirectory("paddock-remote-bench-cp-");
    cleanup.register(() -> Cleanup.deleteTree(data));
    ProcessBuilder builder = checkout.paddockServer(data);
    builder.environment().putAll(env);
    builder.environment().put("PADDOCK_ADMIN_KEY", ControlPlaneBench.ADMIN_KEY);
    builder.environment().put("PADDOCK_RECONCILE_SECONDS", "3600");
    builder.environment().put("PADDOCK_MAX_SANDBOXES", "100");
    return ControlPlaneBench.listening(builder, cleanup);
  }

  private static HttpConnection admin(int port) throws Exception {
    return HttpConnection.open(port, "Authorization", "Bearer " + ControlPlaneBench.ADMIN_KEY);
  }

  private static long createAndDelete(int port) throws Exception {
    try (HttpConnection c = admin(port)) {
      long t = System.nanoTime();
      HttpConnection.Reply reply = c.post("/api/v1/sandboxes?wait=true", new byte[0]);
      long took = System.nanoTime() - t;
      ControlPlaneBench.require(reply, 200);
      ControlPlaneBench.require(c.delete("/api/v1/sandboxes/" + ControlPlaneBench.id(reply)), 200);
      return took;
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
                  try (HttpConnection c = admin(port)) {
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

  /** The sessions a runtime API holds, from its capacity route. */
  private static int held(int port, String key) throws Exception {
    try (HttpConnection c = HttpConnection.open(port, "X-API-Key", key)) {
      HttpConnection.Reply reply = c.get("/paddock/capacity");
      ControlPlaneBench.require(reply, 200);
      Matcher m = SANDBOXES.matcher(new String(reply.body(), StandardCharsets.UTF_8));
      if (!m.find()) {
        throw new IllegalStateException("no sandbox count in " + reply.text());
      }
      return Integer.parseInt(m.group(1));
    }
  }

  /** RUNNING sandboxes the control plane lists. */
  private static int running(int port) throws Exception {
    try (HttpConnection c = admin(port)) {
      HttpConnection.Reply reply = c.get("/api/v1/sandboxes/search?limit=100");
      ControlPlaneBench.require(reply, 200);
      return (int) RUNNING.matcher(reply.text()).results().count();
    }
  }
}
