package dev.paddock.bench;

import java.io.BufferedWriter;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Terminals, end to end over a real agent process: keystroke → echo round trips over the terminal
 * WebSocket, and {@code cat} of 100 MiB through a terminal to a WebSocket viewer (baseline: the
 * same {@code cat} through util-linux {@code script}'s own pty, to /dev/null). With {@code
 * --baseline DIR} (a built checkout of the previous version, e.g. /work/ci-base) it also starts
 * that build's agent and this one alternately and compares cold start and idle RSS.
 *
 * <pre>
 * java -cp paddock-bench/target/benchmarks.jar dev.paddock.bench.TerminalBench [--baseline DIR]
 *     [--keystrokes N] [--cat-mib N] [--starts N]
 * </pre>
 */
public final class TerminalBench {
  private static final Pattern ID = Pattern.compile("\"id\":\"([^\"]+)\"");

  private TerminalBench() {}

  public static void main(String[] args) throws Exception {
    Optional<Path> baseline = Optional.empty();
    int keystrokes = 2000;
    int catMiB = 100;
    int starts = 9;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--baseline" -> baseline = Optional.of(Path.of(args[++i]).toAbsolutePath());
        case "--keystrokes" -> keystrokes = Integer.parseInt(args[++i]);
        case "--cat-mib" -> catMiB = Integer.parseInt(args[++i]);
        case "--starts" -> starts = Integer.parseInt(args[++i]);
        default -> {
          System.err.println(
              "usage: TerminalBench [--baseline DIR] [--keystrokes N] [--cat-mib N] [--starts N]");
          System.exit(2);
        }
      }
    }
    Optional<Path> base = baseline;
    int keys = keystrokes;
    int mib = catMiB;
    int startCount = starts;
    Cleanup.around(cleanup -> run(cleanup, base, keys, mib, startCount));
  }

  private static void run(
      Cleanup cleanup, Optional<Path> baseline, int keystrokes, int catMiB, int starts)
      throws Exception {
    Checkout current = Checkout.find();
    System.out.println("paddock terminal bench, JDK " + Runtime.version());
    try (AgentProcess agent = AgentProcess.start(current, true, cleanup)) {
      keystrokes(agent, keystrokes);
      cat(agent, cleanup, catMiB);
    }
    if (baseline.isPresent()) {
      coldStarts(cleanup, current, checkoutAt(baseline.get(), current), starts);
    }
  }

  // ---- keystroke round trip ----

  private static void keystrokes(AgentProcess agent, int count) throws Exception {
    String id = createTerminal(agent, "{\"command\": \"exec bash --norc --noprofile -i\"}");
    Viewer viewer = Viewer.attach(agent, id);
    viewer.awaitQuiet(Duration.ofMillis(500));
    Samples rtt = new Samples(count);
    byte[][] keys = {"a".getBytes(StandardCharsets.US_ASCII), {0x7f}};
    for (int i = 0; i < count + 200; i++) {
      viewer.chunks.clear();
      long start = System.nanoTime();
      viewer.send(keys[i % 2]);
      viewer.chunks.poll(5, TimeUnit.SECONDS);
      if (i >= 200) {
        rtt.add(System.nanoTime() - start);
      }
      // Backspace echoes "\b \b", possibly in more than one frame: let it settle.
      viewer.awaitQuiet(Duration.ofMillis(2));
    }
    viewer.close();
    System.out.printf(
        "keystroke -> echo over WebSocket (%d keys after 200 warm-up): p50 %.3f ms, p90 %.3f ms,"
            + " p99 %.3f ms%n",
        count, rtt.percentileMillis(50), rtt.percentileMillis(90), rtt.percentileMillis(99));
  }

  // ---- cat throughput ----

  private static void cat(AgentProcess agent, Cleanup cleanup, int mib) throws Exception {
    Path dir = cleanup.tempDir("paddock-bench-cat-");
    Path file = dir.resolve("data.txt");
    writeFile(file, mib);
    long size = Files.size(file);
    String id =
        createTerminal(agent, "{\"command\": \"read go; cat " + file + "; stty -a >/dev/null\"}");
    Viewer viewer = Viewer.attach(agent, id);
    viewer.awaitQuiet(Duration.ofMillis(300));
    viewer.counting.set(0);
    long start = System.nanoTime();
    viewer.send("\r".getBytes(StandardCharsets.US_ASCII));
    viewer.exited.get(10, TimeUnit.MINUTES);
    long elapsed = System.nanoTime() - start;
    long received = viewer.counting.get();
    viewer.close();
    double viaAgent = (size / 1048576.0) / (elapsed / 1e9);

    long scriptStart = System.nanoTime();
    Process script =
        new ProcessBuilder("script", "-qfec", "cat " + file, "/dev/null")
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
            .start();
    script.waitFor();
    double viaScript = (size / 1048576.0) / ((System.nanoTime() - scriptStart) / 1e9);
    System.out.printf(
        "cat %d MiB through a terminal to a WebSocket viewer: %.1f MiB/s (%d bytes received incl."
            + " \\r\\n, %d skipped); baseline script(1) pty to /dev/null: %.1f MiB/s (ratio"
            + " %.2f)%n",
        mib, viaAgent, received, viewer.skipped.get(), viaScript, viaAgent / viaScript);
  }

  private static void writeFile(Path file, int mib) throws IOException {
    String line = "x".repeat(99) + "\n";
    try (BufferedWriter out = Files.newBufferedWriter(file)) {
      for (long i = 0; i < (long) mib * 1048576 / 100; i++) {
        out.write(line);
      }
    }
  }

  // ---- cold start and idle RSS against the baseline build ----

  private static void coldStarts(Cleanup cleanup, Checkout current, Checkout base, int rounds)
      throws Exception {
    List<Long> startCurrent = new ArrayList<>();
    List<Long> startBase = new ArrayList<>();
    List<Double> rssCurrent = new ArrayList<>();
    List<Double> rssBase = new ArrayList<>();
    for (int i = 0; i < rounds; i++) {
      measure(cleanup, base, startBase, rssBase);
      measure(cleanup, current, startCurrent, rssCurrent);
    }
    System.out.printf(
        "cold start to listening (AOT cache, median of %d): this build %.0f ms, baseline %.0f ms"
            + " (ratio %.2f)%n",
        rounds,
        median(startCurrent) / 1e6,
        median(startBase) / 1e6,
        (double) median(startCurrent) / median(startBase));
    System.out.printf(
        "idle RSS 2 s after start (median): this build %.1f MiB, baseline %.1f MiB%n",
        medianDouble(rssCurrent), medianDouble(rssBase));
  }

  private static void measure(
      Cleanup cleanup, Checkout checkout, List<Long> starts, List<Double> rss) throws Exception {
    try (AgentProcess agent = AgentProcess.start(checkout, true, cleanup)) {
      starts.add(System.nanoTime() - agent.startNanos());
      Thread.sleep(2000); // Let it settle to idle: that is what is measured.
      rss.add(agent.rssMiB());
    }
  }

  private static Checkout checkoutAt(Path root, Checkout current) {
    Path agent = root.resolve("paddock-agent-server");
    Path aot = agent.resolve("target/agent-server.aot");
    return new Checkout(
        root,
        current.java(),
        agent.resolve("target/paddock-agent-server-all.jar"),
        agent.resolve("agent-jvm.options"),
        Files.isRegularFile(aot) ? Optional.of(aot) : Optional.empty());
  }

  private static long median(List<Long> values) {
    List<Long> sorted = values.stream().sorted().toList();
    return sorted.get(sorted.size() / 2);
  }

  private static double medianDouble(List<Double> values) {
    List<Double> sorted = values.stream().sorted().toList();
    return sorted.get(sorted.size() / 2);
  }

  // ---- client side ----

  private static final HttpClient CLIENT = HttpClient.newHttpClient();

  private static String createTerminal(AgentProcess agent, String json) throws Exception {
    HttpResponse<String> created =
        CLIENT.send(
            HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + agent.port() + "/api/terminals"))
                .header("X-Session-API-Key", agent.sessionKey())
                .POST(HttpRequest.BodyPublishers.ofString(json))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    Matcher m = ID.matcher(created.body());
    if (created.statusCode() != 201 || !m.find()) {
      throw new IllegalStateException("creating a terminal failed: " + created.body());
    }
    return m.group(1);
  }

  /** A terminal viewer that queues output frames and counts bytes. */
  private static final class Viewer implements WebSocket.Listener {
    final BlockingQueue<byte[]> chunks = new LinkedBlockingQueue<>();
    final AtomicLong counting = new AtomicLong();
    final AtomicLong skipped = new AtomicLong();
    final CompletableFuture<Void> exited = new CompletableFuture<>();
    private final StringBuilder text = new StringBuilder();
    private volatile boolean queueing = true;
    private WebSocket socket;

    static Viewer attach(AgentProcess agent, String id) throws Exception {
      Viewer viewer = new Viewer();
      viewer.socket =
          CLIENT
              .newWebSocketBuilder()
              .header("X-Session-API-Key", agent.sessionKey())
              .buildAsync(
                  URI.create("ws://127.0.0.1:" + agent.port() + "/api/terminals/" + id + "/ws"),
                  viewer)
              .get(10, TimeUnit.SECONDS);
      return viewer;
    }

    void send(byte[] bytes) throws Exception {
      socket.sendBinary(ByteBuffer.wrap(bytes), true).get(5, TimeUnit.SECONDS);
    }

    /** Waits until no output arrived for {@code quiet}. */
    void awaitQuiet(Duration quiet) throws InterruptedException {
      while (chunks.poll(quiet.toNanos(), TimeUnit.NANOSECONDS) != null) {
        // Keep draining.
      }
    }

    @Override
    public CompletionStage<?> onBinary(WebSocket webSocket, ByteBuffer data, boolean last) {
      counting.addAndGet(data.remaining());
      if (queueing) {
        byte[] bytes = new byte[data.remaining()];
        data.get(bytes);
        chunks.add(bytes);
      }
      webSocket.request(1);
      return null;
    }

    @Override
    public CompletionStage<?> onText(WebSocket webSocket, CharSequence data, boolean last) {
      text.append(data);
      if (last) {
        String message = text.toString();
        text.setLength(0);
        if (message.contains("\"type\":\"exit\"")) {
          exited.complete(null);
        } else if (message.contains("\"type\":\"skipped\"")) {
          Matcher m = Pattern.compile("\"bytes\":(\\d+)").matcher(message);
          if (m.find()) {
            skipped.addAndGet(Long.parseLong(m.group(1)));
          }
        }
      }
      webSocket.request(1);
      return null;
    }

    @Override
    public CompletionStage<?> onClose(WebSocket webSocket, int statusCode, String reason) {
      exited.complete(null);
      return null;
    }

    void close() {
      queueing = false;
      if (!socket.isOutputClosed()) {
        socket.sendClose(WebSocket.NORMAL_CLOSURE, "done").orTimeout(5, TimeUnit.SECONDS).join();
      }
    }
  }
}
