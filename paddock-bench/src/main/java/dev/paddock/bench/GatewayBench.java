package dev.paddock.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The sandbox gateway against direct agent access, on one {@code paddock server} (process backend,
 * gateway on) started from the built CLI jar: the same sandbox is reached directly on its agent's
 * port (read from its ready file) and through {@code /sandboxes/{id}/agent} of the control plane.
 * With {@code --against ROOT} the same figures are measured, in the same run, on the server of a
 * second built checkout (the previous build), so a change to the gateway's hot path shows as the
 * difference of two lines.
 *
 * <pre>
 * java -cp paddock-bench/target/benchmarks.jar dev.paddock.bench.GatewayBench
 *     [--quick] [--json FILE] [--against ROOT]
 * </pre>
 */
public final class GatewayBench {
  private static final Pattern KEY = Pattern.compile("\"session_api_key\":\"([^\"]+)\"");
  private static final String USAGE =
      "GatewayBench [--quick] [--json FILE] [--against CHECKOUT_ROOT]";

  private GatewayBench() {}

  public static void main(String[] args) throws Exception {
    List<String> rest = new ArrayList<>(List.of(args));
    Optional<Path> against = Optional.empty();
    int at = rest.indexOf("--against");
    if (at >= 0) {
      if (at + 1 >= rest.size()) {
        System.err.println("usage: " + USAGE);
        System.exit(2);
      }
      against = Optional.of(Path.of(rest.get(at + 1)));
      rest.subList(at, at + 2).clear();
    }
    BenchOptions options = BenchOptions.parseOrExit(rest.toArray(String[]::new), USAGE, false);
    Optional<Path> baseline = against;
    Cleanup.around(cleanup -> run(options, baseline, cleanup));
  }

  private static void run(BenchOptions options, Optional<Path> against, Cleanup cleanup)
      throws Exception {
    Map<String, String> context = new LinkedHashMap<>();
    context.put("run", options.quick() ? "quick" : "full");
    context.put("backend", "process, gateway on, path mode");
    context.put("cores", Integer.toString(Runtime.getRuntime().availableProcessors()));
    context.put(
        "jdk", System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version"));
    against.ifPresent(root -> context.put("previous build", root.toString()));
    Report report = new Report(context);
    Amounts plan = new Amounts(options.quick());
    new Figures(Checkout.find(), "", plan, report, cleanup).all();
    if (against.isPresent()) {
      new Figures(Checkout.at(against.get()), "previous build: ", plan, report, cleanup).all();
    }
    report.print(System.out);
    if (options.json().isPresent()) {
      report.writeJson(options.json().get());
    }
  }

  /** How much of everything a run does. */
  record Amounts(
      int execs, int perClient, long streamBytes, int webSockets, int pausedRequests, int warmup) {
    Amounts(boolean quick) {
      this(
          quick ? 300 : 3000,
          quick ? 50 : 400,
          (quick ? 20L : 200L) << 20,
          quick ? 100 : 500,
          quick ? 200 : 2000,
          quick ? 100 : 500);
    }
  }

  /** The 8-client rounds in order, true for the gateway: ABBA twice. */
  private static final List<Boolean> ROUNDS =
      List.of(false, true, true, false, false, true, true, false);

  /** One server's figures: one sandbox, reached both ways. */
  private static final class Figures {
    private final Checkout checkout;
    private final String label;
    private final Amounts plan;
    private final Report report;
    private final Cleanup cleanup;
    private Path data;
    private ControlPlaneBench.Server server;
    private String id;
    private String key;
    private int direct;

    Figures(Checkout checkout, String label, Amounts plan, Report report, Cleanup cleanup) {
      this.checkout = checkout;
      this.label = label;
      this.plan = plan;
      this.report = report;
      this.cleanup = cleanup;
    }

    void all() throws Exception {
      start();
      try {
        execLatency();
        execThroughput();
        stream();
        webSockets();
        paused();
      } finally {
        try (HttpConnection c = admin()) {
          c.delete("/api/v1/sandboxes/" + id);
        }
      }
    }

    private void start() throws Exception {
      data = Files.createTempDirectory("paddock-gateway-bench-");
      cleanup.register(() -> Cleanup.deleteTree(data));
      ProcessBuilder builder = checkout.paddockServer(data);
      builder.environment().put("PADDOCK_ADMIN_KEY", ControlPlaneBench.ADMIN_KEY);
      builder.environment().put("PADDOCK_RECONCILE_SECONDS", "3600");
      builder.environment().put("PADDOCK_GATEWAY", "on");
      server = ControlPlaneBench.listening(builder, cleanup);
      try (HttpConnection c = admin()) {
        HttpConnection.Reply created = c.post("/api/v1/sandboxes?wait=true", new byte[0]);
        ControlPlaneBench.require(created, 200);
        id = ControlPlaneBench.id(created);
        Matcher m = KEY.matcher(created.text());
        if (!m.find()) {
          throw new IOException("no session key in " + created.text());
        }
        key = m.group(1);
      }
      Path portFile = data.resolve("sandboxes").resolve(id).resolve("agent.port");
      direct = Integer.parseInt(Files.readString(portFile).strip());
    }

    private HttpConnection admin() throws IOException {
      return HttpConnection.open(
          server.port(), "Authorization", "Bearer " + ControlPlaneBench.ADMIN_KEY);
    }

    private String prefix() {
      return "/sandboxes/" + id + "/agent";
    }

    /** exec `true`, one client, direct and gateway requests interleaved one for one. */
    private void execLatency() throws Exception {
      byte[] body = AgentCalls.commandBody("true", null);
      Samples viaDirect = new Samples(plan.execs());
      Samples viaGateway = new Samples(plan.execs());
      try (HttpConnection d = HttpConnection.open(direct, key);
          HttpConnection g = HttpConnection.open(server.port(), key)) {
        for (int i = 0; i < plan.warmup(); i++) {
          exec(d, "", body);
          exec(g, prefix(), body);
        }
        for (int i = 0; i < plan.execs(); i++) {
          long t = System.nanoTime();
          exec(d, "", body);
          long m = System.nanoTime();
          exec(g, prefix(), body);
          long e = System.nanoTime();
          viaDirect.add(m - t);
          viaGateway.add(e - m);
        }
      }
      double directP50 = viaDirect.percentileMillis(50);
      double gatewayP50 = viaGateway.percentileMillis(50);
      report.add(
          Figure.info(
              label + "exec `true` p50 through the gateway",
              "ms",
              gatewayP50,
              directP50,
              "exec `true` p50 directly (interleaved)"));
      report.add(
          Figure.of(
              label + "exec `true` p50 overhead (gateway − direct)",
              "ms",
              gatewayP50 - directP50,
              directP50,
              "direct p50",
              Figure.Target.atMost(0.5)));
      report.add(
          Figure.info(
              label + "exec `true` p99 through the gateway",
              "ms",
              viaGateway.percentileMillis(99),
              viaDirect.percentileMillis(99),
              "exec `true` p99 directly"));
    }

    private static void exec(HttpConnection c, String prefix, byte[] body) throws IOException {
      HttpConnection.Reply reply = c.post(prefix + AgentCalls.EXECUTE, body);
      if (reply.status() != 200 || !reply.text().contains("\"exit_code\":0")) {
        throw new IllegalStateException("exec answered " + reply.status() + ": " + reply.text());
      }
    }

    /**
     * 8 keep-alive clients, in eight rounds ordered direct, gateway, gateway, direct, twice (each
     * kind at the same mean position, so an agent that drifts over the run weighs on both alike);
     * each kind's rate is its requests over its rounds' summed time.
     */
    private void execThroughput() throws Exception {
      byte[] body = AgentCalls.commandBody("true", null);
      int perRound = Math.max(1, plan.perClient() / 2);
      double directSeconds = 0;
      double gatewaySeconds = 0;
      double[] directCpu = new double[2];
      double[] gatewayCpu = new double[2];
      for (boolean viaGateway : ROUNDS) {
        if (viaGateway) {
          gatewaySeconds +=
              8 * perRound / throughput(server.port(), prefix(), body, perRound, gatewayCpu);
        } else {
          directSeconds += 8 * perRound / throughput(direct, "", body, perRound, directCpu);
        }
      }
      int requests = ROUNDS.size() / 2 * 8 * perRound;
      double directRate = requests / directSeconds;
      double gatewayRate = requests / gatewaySeconds;
      report.add(
          Figure.info(
              label + "exec `true`, 8 clients: machine CPU per request, through the gateway",
              "ms",
              gatewayCpu[0] / requests,
              directCpu[0] / requests,
              "the same directly"));
      report.add(
          Figure.info(
              label + "exec `true`, 8 clients: control-plane CPU per gateway request",
              "ms",
              gatewayCpu[1] / requests,
              directCpu[1] / requests,
              "the same while clients call the agent directly"));
      report.add(
          Figure.info(
              label + "exec `true`, 8 clients, through the gateway",
              "req/s",
              gatewayRate,
              directRate,
              "8 clients directly"));
      report.add(
          Figure.of(
              label + "exec `true`, 8 clients: gateway ÷ direct",
              "%",
              100 * gatewayRate / directRate,
              100,
              "direct = 100 %",
              Figure.Target.atLeast(80)));
    }

    /** Requests per second; adds the machine's and the server's CPU milliseconds to {@code cpu}. */
    private double throughput(int port, String prefix, byte[] body, int perClient, double[] cpu)
        throws Exception {
      double machine = CpuClock.machineMillis();
      double own = CpuClock.processMillis(server.pid());
      double rate = throughputOnly(port, prefix, body, perClient);
      cpu[0] += CpuClock.machineMillis() - machine;
      cpu[1] += CpuClock.processMillis(server.pid()) - own;
      return rate;
    }

    private double throughputOnly(int port, String prefix, byte[] body, int perClient)
        throws Exception {
      return Throughput.perSecond(
          8,
          perClient,
          plan.warmup() / 10,
          () -> {
            HttpConnection c = HttpConnection.open(port, key);
            return new Throughput.Worker() {
              @Override
              public void once() throws Exception {
                exec(c, prefix, body);
              }

              @Override
              public void close() throws IOException {
                c.close();
              }
            };
          });
    }

    /**
     * The NDJSON stream of a command writing {@code streamBytes}, best of 2 each way; then once
     * more through the gateway with the control plane's live heap read half-way (after a full GC).
     */
    private void stream() throws Exception {
      String command = Plan.outputPipeline(plan.streamBytes());
      double bestDirect = 0;
      double bestGateway = 0;
      for (int round = 0; round < 2; round++) {
        bestDirect = Math.max(bestDirect, streamMiBPerSecond(direct, "", command));
        bestGateway = Math.max(bestGateway, streamMiBPerSecond(server.port(), prefix(), command));
      }
      long mib = plan.streamBytes() >> 20;
      report.add(
          Figure.info(
              label + "NDJSON stream of " + mib + " MiB through the gateway",
              "MiB/s",
              bestGateway,
              bestDirect,
              "the same stream directly"));
      report.add(
          Figure.of(
              label + "NDJSON stream of " + mib + " MiB: gateway ÷ direct",
              "%",
              100 * bestGateway / bestDirect,
              100,
              "direct = 100 %",
              Figure.Target.atLeast(70)));
      double before = liveHeapMiB();
      double during = heapHalfWay(command);
      report.add(
          Figure.of(
              label + "control-plane live heap half-way through the stream, growth",
              "MiB",
              during - before,
              before,
              "live heap before the stream (after a full GC)",
              Figure.Target.atMost(16)));
    }

    private double streamMiBPerSecond(int port, String prefix, String command) throws Exception {
      try (HttpConnection c = HttpConnection.open(port, key)) {
        long t = System.nanoTime();
        long chars = AgentCalls.stream(c, prefix, command);
        double seconds = (System.nanoTime() - t) / 1e9;
        if (chars != plan.streamBytes()) {
          throw new IllegalStateException("streamed " + chars + " of " + plan.streamBytes());
        }
        return chars / (double) (1 << 20) / seconds;
      }
    }

    /** Streams through the gateway, stops reading half-way, reads the heap, then finishes. */
    private double heapHalfWay(String command) throws Exception {
      try (HttpConnection c = HttpConnection.open(server.port(), key)) {
        HttpConnection.StreamedReply reply =
            c.postStreaming(prefix() + AgentCalls.STREAM, AgentCalls.commandBody(command, null));
        try (InputStream body = reply.body()) {
          body.skipNBytes(plan.streamBytes() / 2);
          double during = liveHeapMiB();
          body.transferTo(OutputStream.nullOutputStream());
          return during;
        }
      }
    }

    /** Used heap of the server after a full GC, from {@code jcmd GC.run} and {@code jstat -gc}. */
    private double liveHeapMiB() throws Exception {
      Path bin = Path.of(System.getProperty("java.home"), "bin");
      String pid = Long.toString(server.pid());
      tool(bin.resolve("jcmd").toString(), pid, "GC.run");
      String[] lines = tool(bin.resolve("jstat").toString(), "-gc", pid).strip().split("\n");
      String[] names = lines[0].strip().split("\\s+");
      String[] values = lines[lines.length - 1].strip().split("\\s+");
      double kib = 0;
      for (int i = 0; i < names.length; i++) {
        if (List.of("S0U", "S1U", "EU", "OU").contains(names[i])) {
          kib += Double.parseDouble(values[i]);
        }
      }
      return kib / 1024;
    }

    private static String tool(String... argv) throws Exception {
      Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
        p.destroyForcibly();
        throw new IOException(String.join(" ", argv) + " failed: " + out);
      }
      return out;
    }

    /** Idle WebSockets to a server in the sandbox, through its port route; RSS before and after. */
    private void webSockets() throws Exception {
      int port = startWebSocketHolder();
      String path = "/sandboxes/" + id + "/port/" + port + "/";
      for (int i = 0; i < 20; i++) {
        upgrade(path).close(); // the tunnel's code paths, warmed before the first reading
      }
      double before = Rss.ofPid(server.pid());
      List<Socket> open = new ArrayList<>();
      try {
        for (int i = 0; i < plan.webSockets(); i++) {
          open.add(upgrade(path));
        }
        double after = Rss.ofPid(server.pid());
        report.add(
            Figure.of(
                label + plan.webSockets() + " idle WebSockets through the gateway: RSS growth",
                "MiB",
                after - before,
                before,
                "control-plane RSS before",
                Figure.Target.atMost(64)));
      } finally {
        for (Socket s : open) {
          s.close();
        }
      }
    }

    /** A connection upgraded through the gateway (its 101 read), left open. */
    private Socket upgrade(String path) throws IOException {
      Socket socket = new Socket(InetAddress.getLoopbackAddress(), server.port());
      try {
        String request =
            "GET "
                + path
                + " HTTP/1.1\r\nHost: 127.0.0.1:"
                + server.port()
                + "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                + "Origin: http://127.0.0.1:"
                + server.port()
                + "\r\nX-Session-API-Key: "
                + key
                + "\r\n\r\n";
        socket.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
        String head = readHead(socket.getInputStream());
        if (!head.startsWith("HTTP/1.1 101")) {
          throw new IOException("upgrade through the gateway answered: " + head);
        }
        return socket;
      } catch (IOException e) {
        socket.close();
        throw e;
      }
    }

    private static String readHead(InputStream in) throws IOException {
      StringBuilder head = new StringBuilder();
      while (!head.toString().endsWith("\r\n\r\n")) {
        int b = in.read();
        if (b < 0) {
          throw new IOException("connection closed after: " + head);
        }
        head.append((char) b);
      }
      return head.toString();
    }

    /** Starts {@code WebSocketHolder.java} as a command of the sandbox; returns its port. */
    private int startWebSocketHolder() throws Exception {
      Path source = data.resolve("WebSocketHolder.java");
      try (InputStream in = GatewayBench.class.getResourceAsStream("WebSocketHolder.java")) {
        Files.write(source, in.readAllBytes());
      }
      Path portFile = data.resolve("holder.port");
      String command = "exec '" + checkout.java() + "' '" + source + "' '" + portFile + "'";
      try (HttpConnection c = HttpConnection.open(direct, key)) {
        HttpConnection.Reply started =
            c.post("/api/bash/start_bash_command", AgentCalls.commandBody(command, null));
        ControlPlaneBench.require(started, 200);
      }
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
      while (!Files.exists(portFile)) {
        if (System.nanoTime() > deadline) {
          throw new IOException("the WebSocket holder did not start within 60 s");
        }
        Thread.sleep(50); // a bench, not a test: polling a file the holder writes once
      }
      return Integer.parseInt(Files.readString(portFile).strip());
    }

    /** Requests to the paused sandbox: each answered 409 by the gateway from the store. */
    private void paused() throws Exception {
      Samples fromStore = new Samples(plan.pausedRequests());
      Samples api = new Samples(plan.pausedRequests());
      try (HttpConnection c = admin()) {
        ControlPlaneBench.require(c.post("/api/v1/sandboxes/" + id + "/pause", new byte[0]), 200);
        for (int i = 0; i < plan.pausedRequests(); i++) {
          long t = System.nanoTime();
          ControlPlaneBench.require(c.get(prefix() + "/alive"), 409);
          long m = System.nanoTime();
          ControlPlaneBench.require(c.get("/api/v1/sandboxes/" + id), 200);
          long e = System.nanoTime();
          fromStore.add(m - t);
          api.add(e - m);
        }
      }
      report.add(
          Figure.of(
              label + "request to a paused sandbox, answered 409: p99",
              "ms",
              fromStore.percentileMillis(99),
              api.percentileMillis(99),
              "GET /api/v1/sandboxes/{id} p99 (interleaved)",
              Figure.Target.atMost(50)));
    }
  }
}
