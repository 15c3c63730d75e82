package dev.paddock.bench;

import java.io.IOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;

/**
 * The race-free file routes against their baselines, same run: {@code GET /api/file/list} of a
 * 10,000-entry directory next to {@code ls -la}; {@code GET /api/file/download} of a 100 MiB file
 * next to the previous build's agent (a checkout at {@code --baseline DIR}, default {@code
 * /work/ci-base}, which opened files by name) and {@code cat > /dev/null}. p50 of 20 runs (list)
 * and 7 runs (download), after warm-up.
 *
 * <pre>
 * ./mvnw -q package -DskipTests -DskipAot
 * $JAVA_HOME/bin/java -cp paddock-bench/target/benchmarks.jar dev.paddock.bench.FileBench [--json FILE]
 * </pre>
 */
public final class FileBench {
  private static final int ENTRIES = 10_000;
  private static final long MIB = 1024 * 1024;
  private static final int FILE_MIB = 100;
  private static final Path BASELINE = Path.of("/work/ci-base");

  private FileBench() {}

  public static void main(String[] args) throws Exception {
    BenchOptions options = BenchOptions.parseOrExit(args, "FileBench [--json FILE]", false);
    Cleanup.around(cleanup -> run(options.json(), cleanup));
  }

  private static void run(Optional<Path> json, Cleanup cleanup) throws Exception {
    Checkout current = Checkout.find();
    Path data = cleanup.tempDir("paddock-file-bench-");
    Path dir = Files.createDirectories(data.resolve("many"));
    for (int i = 0; i < ENTRIES; i++) {
      Files.writeString(dir.resolve(String.format("file-%05d.txt", i)), "x");
    }
    Path big = data.resolve("big.bin");
    byte[] chunk = new byte[(int) MIB];
    new Random(7).nextBytes(chunk);
    try (var out = Files.newOutputStream(big)) {
      for (int i = 0; i < FILE_MIB; i++) {
        out.write(chunk);
      }
    }

    Samples list = new Samples(20);
    Samples ls = new Samples(20);
    Samples download = new Samples(7);
    Samples previous = new Samples(7);
    Samples cat = new Samples(7);
    try (AgentProcess agent = AgentProcess.start(current, false, cleanup);
        HttpConnection c = agent.connect()) {
      String listPath = "/api/file/list?limit=100000&path=" + encode(dir);
      time(5, 0, () -> require(c.get(listPath), 200));
      time(0, 20, () -> list.add(timed(() -> require(c.get(listPath), 200))));
      String get = "/api/file/download?path=" + encode(big);
      time(2, 0, () -> require(c.get(get), 200));
      time(0, 7, () -> download.add(timed(() -> require(c.get(get), 200))));
    }
    Checkout baseline = baselineCheckout(current);
    try (AgentProcess agent = AgentProcess.start(baseline, false, cleanup);
        HttpConnection c = agent.connect()) {
      String get = "/api/file/download?path=" + encode(big);
      time(2, 0, () -> require(c.get(get), 200));
      time(0, 7, () -> previous.add(timed(() -> require(c.get(get), 200))));
    }
    time(3, 0, () -> run("ls", "-la", dir.toString()));
    time(0, 20, () -> ls.add(timed(() -> run("ls", "-la", dir.toString()))));
    time(0, 7, () -> cat.add(timed(() -> run("cat", big.toString()))));

    Map<String, String> context = new LinkedHashMap<>();
    context.put("directory", ENTRIES + " files");
    context.put("file", FILE_MIB + " MiB");
    context.put("baseline build", baseline.agentJar().toString());
    context.put("cores", Integer.toString(Runtime.getRuntime().availableProcessors()));
    Report report = new Report(context);
    report.add(
        Figure.info(
            "list of 10,000 entries p50",
            "ms",
            list.percentileMillis(50),
            ls.percentileMillis(50),
            "ls -la > /dev/null"));
    report.add(
        Figure.info(
            "download of 100 MiB p50",
            "ms",
            download.percentileMillis(50),
            previous.percentileMillis(50),
            "previous build's download"));
    report.add(
        Figure.info(
            "download of 100 MiB p50 (vs cat)",
            "ms",
            download.percentileMillis(50),
            cat.percentileMillis(50),
            "cat > /dev/null"));
    report.print(System.out);
    if (json.isPresent()) {
      report.writeJson(json.get());
    }
  }

  private static Checkout baselineCheckout(Checkout current) {
    return new Checkout(
        BASELINE,
        current.java(),
        BASELINE.resolve("paddock-agent-server/target/paddock-agent-server-all.jar"),
        BASELINE.resolve("paddock-agent-server/agent-jvm.options"),
        Optional.empty());
  }

  private interface Step {
    void run() throws Exception;
  }

  private static void time(int warmups, int runs, Step step) throws Exception {
    for (int i = 0; i < warmups + runs; i++) {
      step.run();
    }
  }

  private static long timed(Step step) throws Exception {
    long t0 = System.nanoTime();
    step.run();
    return System.nanoTime() - t0;
  }

  private static void require(HttpConnection.Reply reply, int status) throws IOException {
    if (reply.status() != status) {
      throw new IOException("expected " + status + ", got " + reply.status());
    }
  }

  private static void run(String... argv) throws Exception {
    Process p =
        new ProcessBuilder(List.of(argv))
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    if (p.waitFor() != 0) {
      throw new IOException(String.join(" ", argv) + " failed");
    }
  }

  private static String encode(Path path) {
    return URLEncoder.encode(path.toString(), StandardCharsets.UTF_8);
  }
}
