package dev.paddock.bench;

import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * The editor and search routes of a production-started agent (options file, AOT cache), each beside
 * the command an agent would otherwise run, in the same run:
 *
 * <ul>
 *   <li>{@code view} of a 300-line range in the middle of a 100 MB file, p50 of repeated views (the
 *       first view, which builds the line index, is shown apart), against {@code sed -n 'S,Ep;Eq'};
 *   <li>{@code str_replace} of one token in a 10,000-line file, p50, against {@code sed -i} of the
 *       same change;
 *   <li>{@code grep} for a literal over 50,000 files, 1 GiB, against {@code grep -rF} (both with
 *       the tree in the page cache; best of five runs each), and {@code rg -F} when installed.
 * </ul>
 *
 * Files are generated in a temporary directory, removed afterwards. {@code --quick} uses a tenth of
 * the sizes.
 *
 * <pre>
 * ./mvnw -q package -DskipTests
 * flock /tmp/paddock-itest.lock $JAVA_HOME/bin/java -cp paddock-bench/target/benchmarks.jar dev.paddock.bench.FileEditBench [--quick] [--json FILE]
 * </pre>
 */
public final class FileEditBench {
  private static final long MB = 1_000_000;
  private static final String NEEDLE = "paddock_needle_4711";

  private FileEditBench() {}

  public static void main(String[] args) throws Exception {
    BenchOptions options =
        BenchOptions.parseOrExit(args, "FileEditBench [--quick] [--json FILE]", false);
    Cleanup.around(cleanup -> run(options, cleanup));
  }

  private static void run(BenchOptions options, Cleanup cleanup) throws Exception {
    int scale = options.quick() ? 10 : 1;
    Checkout checkout = Checkout.find();
    Path data = cleanup.tempDir("paddock-edit-bench-");
    Report report = new Report(context(checkout));
    try (AgentProcess agent = AgentProcess.start(checkout, true, cleanup);
        HttpConnection http = agent.connect()) {
      view(http, data, 100 * MB / scale, report);
      strReplace(http, data, report);
      grep(http, data, 50_000 / scale, report);
    }
    report.print(System.out);
    if (options.json().isPresent()) {
      report.writeJson(options.json().get());
    }
  }

  private static Map<String, String> context(Checkout checkout) {
    Map<String, String> context = new LinkedHashMap<>();
    context.put("agent", "production start: agent-jvm.options, AOT cache when built");
    context.put("cores", Integer.toString(Runtime.getRuntime().availableProcessors()));
    context.put(
        "jdk", System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version"));
    context.put(
        "rg", onPath("rg") ? "installed (measured: rg -F, its default threads)" : "not installed");
    return context;
  }

  private static void view(HttpConnection http, Path data, long bytes, Report report)
      throws Exception {
    Path file = data.resolve("big.log");
    long lines = 0;
    try (BufferedWriter out = Files.newBufferedWriter(file)) {
      for (long written = 0; written < bytes; lines++) {
        String line = "2026-12-01T10:00:00Z line " + lines + " INFO some service said something\n";
        out.write(line);
        written += line.length();
      }
    }
    long start = lines / 2;
    byte[] body = viewBody(file, start, start + 299);
    long t0 = System.nanoTime();
    require(http.post("/api/file/edit", body), 200, "view");
    double firstMs = (System.nanoTime() - t0) / 1e6;
    Samples views = new Samples(50);
    for (int i = 0; i < 50; i++) {
      byte[] shifted = viewBody(file, start + i * 300, start + i * 300 + 299);
      long t = System.nanoTime();
      HttpConnection.Reply reply = http.post("/api/file/edit", shifted);
      views.add(System.nanoTime() - t);
      require(reply, 200, "view");
    }
    Samples sed = new Samples(10);
    for (int i = 0; i < 10; i++) {
      long s = start + i * 300;
      long t = System.nanoTime();
      run(List.of("sed", "-n", s + "," + (s + 299) + "p;" + (s + 299) + "q", file.toString()));
      sed.add(System.nanoTime() - t);
    }
    report.add(
        Figure.info(
            "view 300 lines mid-file of " + Files.size(file) / MB + " MB, p50",
            "ms",
            views.percentileMillis(50),
            sed.percentileMillis(50),
            "sed -n 'S,Ep;Eq' (reads from the start)"));
    report.add(
        Figure.info(
            "first view (builds the line index)",
            "ms",
            firstMs,
            sed.percentileMillis(50),
            "sed -n"));
    Files.delete(file);
  }

  private static byte[] viewBody(Path file, long start, long end) {
    return ("{\"command\":\"view\",\"path\":\""
            + file
            + "\",\"view_range\":["
            + start
            + ","
            + end
            + "],\"max_output_chars\":100000}")
        .getBytes(StandardCharsets.UTF_8);
  }

  private static void strReplace(HttpConnection http, Path data, Report report) throws Exception {
    Path file = data.resolve("Source.java");
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < 10_000; i++) {
      text.append("    int value").append(i).append(" = compute(").append(i).append("); // line\n");
    }
    text.insert(text.length() / 2, "    // marker_even\n");
    Files.writeString(file, text);
    String[] tokens = {"marker_even", "marker_odd"};
    Samples edits = new Samples(200);
    for (int i = 0; i < 200; i++) {
      byte[] body =
          ("{\"command\":\"str_replace\",\"path\":\""
                  + file
                  + "\",\"old_str\":\""
                  + tokens[i % 2]
                  + "\",\"new_str\":\""
                  + tokens[(i + 1) % 2]
                  + "\"}")
              .getBytes(StandardCharsets.UTF_8);
      long t = System.nanoTime();
      HttpConnection.Reply reply = http.post("/api/file/edit", body);
      edits.add(System.nanoTime() - t);
      require(reply, 200, "str_replace");
    }
    Samples sed = new Samples(50);
    for (int i = 0; i < 50; i++) {
      long t = System.nanoTime();
      run(
          List.of(
              "sed",
              "-i",
              "s/" + tokens[i % 2] + "/" + tokens[(i + 1) % 2] + "/",
              file.toString()));
      sed.add(System.nanoTime() - t);
    }
    double p50 = edits.percentileMillis(50);
    report.add(
        Figure.of(
            "str_replace in a 10,000-line file, p50",
            "ms",
            p50,
            sed.percentileMillis(50),
            "sed -i of the same change",
            Figure.Target.atMost(5)));
    report.add(
        Figure.info(
            "str_replace, p90",
            "ms",
            edits.percentileMillis(90),
            sed.percentileMillis(90),
            "sed -i p90"));
  }

  private static void grep(HttpConnection http, Path data, int files, Report report)
      throws Exception {
    Path tree = data.resolve("tree");
    long bytes = generateTree(tree, files);
    List<String> grepCommand = List.of("grep", "-rF", NEEDLE, tree.toString());
    run(grepCommand); // Warms the page cache for both.
    double grepSeconds = Double.MAX_VALUE;
    double ourSeconds = Double.MAX_VALUE;
    long matches = 0;
    byte[] body =
        ("{\"path\":\""
                + tree
                + "\",\"pattern\":\""
                + NEEDLE
                + "\",\"fixed_strings\":true,\"max_results\":100000}")
            .getBytes(StandardCharsets.UTF_8);
    boolean rg = onPath("rg");
    List<String> rgCommand = List.of("rg", "--no-config", "-F", NEEDLE, tree.toString());
    double rgSeconds = Double.MAX_VALUE;
    for (int round = 0; round < 5; round++) {
      long t = System.nanoTime();
      run(grepCommand);
      grepSeconds = Math.min(grepSeconds, (System.nanoTime() - t) / 1e9);
      t = System.nanoTime();
      matches = streamedLines(http, body) - 1;
      ourSeconds = Math.min(ourSeconds, (System.nanoTime() - t) / 1e9);
      if (rg) {
        t = System.nanoTime();
        run(rgCommand);
        rgSeconds = Math.min(rgSeconds, (System.nanoTime() - t) / 1e9);
      }
    }
    double gib = bytes / (double) (1L << 30);
    report.add(
        Figure.of(
            String.format("grep literal, %d files, %.2f GiB (%d matches)", files, gib, matches),
            "s",
            ourSeconds,
            grepSeconds,
            "grep -rF, same tree, page cache warm",
            Figure.Target.atMost(grepSeconds / 0.8)));
    report.add(
        Figure.info(
            "grep literal: throughput", "GiB/s", gib / ourSeconds, gib / grepSeconds, "grep -rF"));
    if (rg) {
      report.add(
          Figure.info(
              "grep literal beside rg",
              "s",
              ourSeconds,
              rgSeconds,
              "rg --no-config -F, same tree, best of five"));
    }
  }

  /**
   * Source-like files of 2-40 KB (about 21 KB on average) in directories of 100; a few hold the
   * needle.
   */
  private static long generateTree(Path tree, int files) throws IOException {
    Random random = new Random(7);
    long total = 0;
    byte[] buffer = new byte[40_000];
    for (int i = 0; i < files; i++) {
      Path dir = Files.createDirectories(tree.resolve("pkg" + i / 100));
      int size = 2_000 + random.nextInt(38_000);
      fillText(buffer, size, random);
      if (i % 1000 == 0) {
        byte[] needle = ("\n// " + NEEDLE + "\n").getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(needle, 0, buffer, size / 2, needle.length);
      }
      Path file = dir.resolve("File" + i + ".java");
      Files.write(file, java.util.Arrays.copyOf(buffer, size));
      total += size;
    }
    return total;
  }

  private static final String[] WORDS = {
    "public ", "final ", "class ", "return ", "void ", "int ", "String ", "if (", ") {\n", "}\n",
    "count", "value", "sandbox", "archive", " = ", "; ", "// ", "\n    ", "new ", "List<String>"
  };

  private static void fillText(byte[] buffer, int size, Random random) {
    int i = 0;
    while (i < size) {
      byte[] word =
          (random.nextInt(8) == 0
                  ? Integer.toString(random.nextInt(100_000))
                  : WORDS[random.nextInt(WORDS.length)])
              .getBytes(StandardCharsets.US_ASCII);
      int n = Math.min(word.length, size - i);
      System.arraycopy(word, 0, buffer, i, n);
      i += n;
    }
  }

  /** POSTs a search and reads its NDJSON to the end; returns the number of lines. */
  private static long streamedLines(HttpConnection http, byte[] body) throws IOException {
    HttpConnection.StreamedReply reply = http.postStreaming("/api/file/grep", body);
    if (reply.status() != 200) {
      throw new IOException("grep answered " + reply.status());
    }
    long lines = 0;
    byte[] buffer = new byte[65536];
    try (InputStream in = reply.body()) {
      for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
        for (int i = 0; i < n; i++) {
          if (buffer[i] == '\n') {
            lines++;
          }
        }
      }
    }
    return lines;
  }

  private static void run(List<String> command) throws IOException, InterruptedException {
    Process process =
        new ProcessBuilder(command)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .redirectError(ProcessBuilder.Redirect.INHERIT)
            .start();
    int exit = process.waitFor();
    if (exit > 1) {
      throw new IOException(command + " exited with " + exit);
    }
  }

  private static void require(HttpConnection.Reply reply, int status, String what)
      throws IOException {
    if (reply.status() != status) {
      throw new IOException(what + " answered " + reply.status() + ": " + reply.text());
    }
  }

  private static boolean onPath(String name) {
    for (String dir : System.getenv().getOrDefault("PATH", "").split(":")) {
      if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, name))) {
        return true;
      }
    }
    return false;
  }
}
