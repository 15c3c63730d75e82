package dev.paddock.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Archive-before-delete of a large mixed workspace, end to end: {@code paddock server} (process
 * backend, SQLite, local-directory archive store, {@code tar.gz}) from the built CLI jar at {@code
 * -Xmx256m}; one sandbox whose workspace is filled directly on disk with 1 GiB (two 256 MiB files
 * of random bytes, two 216 MiB text files, 20,000 files of 4 KiB in 200 directories); {@code tar
 * czf} of that tree timed first (the baseline, same run), then {@code DELETE} timed while the
 * server's VmRSS is sampled every 50 ms. {@code --quick} uses a quarter of the sizes, {@code
 * --large} a 2 GiB workspace.
 *
 * <pre>
 * ./mvnw -q package -DskipTests
 * $JAVA_HOME/bin/java -cp paddock-bench/target/benchmarks.jar dev.paddock.bench.ArchiveBench [--quick|--large] [--json FILE]
 * </pre>
 */
public final class ArchiveBench {
  private static final String ADMIN_KEY = "pdk_bench-admin-key-0123456789abcdef0123456789";
  private static final Pattern LISTENING = Pattern.compile("listening on http://[^:]+:(\\d+)");
  private static final Pattern ID = Pattern.compile("\"id\":\"([^\"]+)\"");
  private static final Pattern ARCHIVE_BYTES = Pattern.compile("\"byte_count\":(\\d+)");
  private static final long MIB = 1024 * 1024;

  private ArchiveBench() {}

  public static void main(String[] args) throws Exception {
    BenchOptions options =
        BenchOptions.parseOrExit(args, "ArchiveBench [--quick|--large] [--json FILE]", true);
    Mix mix = options.quick() ? Mix.QUICK : options.large() ? Mix.LARGE : Mix.FULL;
    Cleanup.around(cleanup -> run(mix, options.json(), cleanup));
  }

  /**
   * The workspace: two random blobs and two text logs of the given sizes, plus 200 directories of
   * {@code smallPerDir} 4 KiB source files. FULL is 1 GiB, LARGE 2 GiB (the memory check).
   */
  record Mix(long blobMib, long logMib, int smallPerDir) {
    static final Mix FULL = new Mix(256, 216, 100);
    static final Mix QUICK = new Mix(64, 54, 25);
    static final Mix LARGE = new Mix(512, 472, 100);
  }

  private static void run(Mix mix, Optional<Path> json, Cleanup cleanup) throws Exception {
    Checkout checkout = Checkout.find();
    Path data = Files.createTempDirectory("paddock-archive-bench-");
    cleanup.register(() -> Cleanup.deleteTree(data));
    long serverPid;
    int port;
    ChildProcess server = startServer(checkout, data, cleanup);
    serverPid = server.pid();
    port = serverPort(server);
    double idleRss = Rss.ofPid(serverPid);

    String id;
    try (HttpConnection c = HttpConnection.open(port, "Authorization", "Bearer " + ADMIN_KEY)) {
      HttpConnection.Reply reply = c.post("/api/v1/sandboxes?wait=true", new byte[0]);
      require(reply, 200);
      id = match(ID, reply.text());
    }
    Path workspace = data.resolve("sandboxes").resolve(id).resolve("workspace");
    long bytes = fill(workspace, mix);

    Path tarOut = data.resolve("baseline.tar.gz");
    long t0 = System.nanoTime();
    Process tar =
        new ProcessBuilder("tar", "czf", tarOut.toString(), "-C", workspace.toString(), ".")
            .inheritIO()
            .start();
    if (tar.waitFor() != 0) {
      throw new IOException("tar czf failed");
    }
    double tarSeconds = (System.nanoTime() - t0) / 1e9;
    long tarBytes = Files.size(tarOut);
    Files.delete(tarOut);

    AtomicLong peakKib = new AtomicLong();
    Thread sampler = Thread.ofPlatform().daemon().start(() -> sample(serverPid, peakKib));
    long t1 = System.nanoTime();
    try (HttpConnection c = HttpConnection.open(port, "Authorization", "Bearer " + ADMIN_KEY)) {
      require(c.delete("/api/v1/sandboxes/" + id), 200);
    } finally {
      sampler.interrupt();
      sampler.join();
    }
    double archiveSeconds = (System.nanoTime() - t1) / 1e9;
    long archiveBytes;
    try (HttpConnection c = HttpConnection.open(port, "Authorization", "Bearer " + ADMIN_KEY)) {
      HttpConnection.Reply listed = c.get("/api/v1/archives/" + id);
      require(listed, 200);
      archiveBytes = Long.parseLong(match(ARCHIVE_BYTES, listed.text()));
    }

    Map<String, String> context = new LinkedHashMap<>();
    context.put("workspace", String.format("%.0f MiB", bytes / (double) MIB));
    context.put(
        "archive",
        String.format(
            "%.0f MiB (tar czf: %.0f MiB)", archiveBytes / (double) MIB, tarBytes / (double) MIB));
    context.put("control plane", "-Xmx256m, process backend, directory store, tar.gz");
    context.put("cores", Integer.toString(Runtime.getRuntime().availableProcessors()));
    context.put(
        "jdk", System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version"));
    Report report = new Report(context);
    double mib = bytes / (double) MIB;
    report.add(
        Figure.of(
            "delete with a tar.gz archive: throughput",
            "MiB/s",
            mib / archiveSeconds,
            mib / tarSeconds,
            "tar czf of the same tree, same run",
            Figure.Target.atLeast(0.8 * mib / tarSeconds)));
    report.add(
        Figure.info(
            "delete with a tar.gz archive: time", "s", archiveSeconds, tarSeconds, "tar czf"));
    report.add(
        Figure.info(
            "control plane peak RSS during the delete",
            "MiB",
            peakKib.get() / 1024.0,
            idleRss,
            "control plane RSS idle, one sandbox"));
    report.print(System.out);
    if (json.isPresent()) {
      report.writeJson(json.get());
    }
  }

  /** Writes the mixed tree; returns its size in bytes. */
  static long fill(Path workspace, Mix mix) throws IOException {
    Random random = new Random(42);
    long total = 0;
    byte[] buffer = new byte[1024 * 1024];
    for (int i = 0; i < 2; i++) {
      total += write(workspace.resolve("blob-" + i + ".bin"), mix.blobMib(), buffer, random, false);
      total += write(workspace.resolve("log-" + i + ".txt"), mix.logMib(), buffer, random, true);
    }
    byte[] small = new byte[4096];
    for (int d = 0; d < 200; d++) {
      Path dir = Files.createDirectories(workspace.resolve("src/pkg" + d));
      for (int f = 0; f < mix.smallPerDir(); f++) {
        fillText(small, random);
        Files.write(dir.resolve("File" + f + ".java"), small);
        total += small.length;
      }
    }
    return total;
  }

  private static long write(Path file, long mib, byte[] buffer, Random random, boolean text)
      throws IOException {
    try (OutputStream out = Files.newOutputStream(file)) {
      for (long i = 0; i < mib; i++) {
        if (text) {
          fillText(buffer, random);
        } else {
          random.nextBytes(buffer);
        }
        out.write(buffer);
      }
    }
    return mib * MIB;
  }

  private static final String[] WORDS = {
    "public ", "final ", "class ", "return ", "void ", "int ", "String ", "if (", ") {\n", "}\n",
    "count", "value", "sandbox", "archive", " = ", "; ", "// ", "\n    ", "new ", "List<String>"
  };

  // Source-like text: compresses about as well as real code (3-5x with gzip).
  private static void fillText(byte[] buffer, Random random) {
    int i = 0;
    while (i < buffer.length) {
      byte[] word =
          (random.nextInt(8) == 0
                  ? Integer.toString(random.nextInt(100_000))
                  : WORDS[random.nextInt(WORDS.length)])
              .getBytes(StandardCharsets.US_ASCII);
      int n = Math.min(word.length, buffer.length - i);
      System.arraycopy(word, 0, buffer, i, n);
      i += n;
    }
  }

  private static void sample(long pid, AtomicLong peakKib) {
    while (!Thread.currentThread().isInterrupted()) {
      try {
        peakKib.accumulateAndGet((long) (Rss.ofPid(pid) * 1024), Math::max);
        Thread.sleep(50); // a sampling interval, not synchronisation
      } catch (IOException e) {
        return;
      } catch (InterruptedException e) {
        return;
      }
    }
  }

  private static ChildProcess startServer(Checkout checkout, Path data, Cleanup cleanup)
      throws IOException {
    ProcessBuilder builder = checkout.paddockServer(data, "-Xmx256m");
    builder.environment().put("PADDOCK_ADMIN_KEY", ADMIN_KEY);
    builder.environment().put("PADDOCK_RECONCILE_SECONDS", "3600");
    builder.environment().put("RUNTIME_FILE_ARCHIVE_ENABLED", "true");
    builder.environment().put("RUNTIME_FILE_ARCHIVE_FORMAT", "tar.gz");
    return cleanup.register(new ChildProcess(builder.start()));
  }

  private static int serverPort(ChildProcess server) throws IOException {
    BufferedReader lines =
        new BufferedReader(
            new InputStreamReader(server.process().getInputStream(), StandardCharsets.UTF_8));
    String line;
    while ((line = lines.readLine()) != null) {
      Matcher m = LISTENING.matcher(line);
      if (m.find()) {
        Thread drain = new Thread(() -> drain(lines), "server-output");
        drain.setDaemon(true);
        drain.start();
        return Integer.parseInt(m.group(1));
      }
    }
    throw new IOException("paddock server exited before listening");
  }

  /** Where the server's output goes: kept after the run, for a failure's diagnosis. */
  static final Path SERVER_LOG = Path.of("paddock-bench", "target", "archive-bench-server.log");

  // Ends quietly when the server is stopped and its output closed.
  private static void drain(BufferedReader lines) {
    try (java.io.Writer log =
        Files.newBufferedWriter(
            Files.createDirectories(SERVER_LOG.toAbsolutePath().getParent())
                .resolve(SERVER_LOG.getFileName()))) {
      for (String line; (line = lines.readLine()) != null; ) {
        log.write(line);
        log.write('\n');
        log.flush();
      }
    } catch (IOException e) {
      // the server is gone
    }
  }

  private static void require(HttpConnection.Reply reply, int status) throws IOException {
    if (reply.status() != status) {
      throw new IOException(
          "expected HTTP "
              + status
              + ", got "
              + reply.status()
              + ": "
              + reply.text()
              + " (server log: "
              + SERVER_LOG
              + ")");
    }
  }

  private static String match(Pattern pattern, String text) throws IOException {
    Matcher m = pattern.matcher(text);
    if (!m.find()) {
      throw new IOException("no " + pattern + " in " + text);
    }
    return m.group(1);
  }
}
