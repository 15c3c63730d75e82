package dev.paddock.backend.ssh;

import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeStartException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.spi.ToolProvider;
import java.util.stream.Stream;

/**
 * The agent and a Java runtime for it, as one directory copied to each host once: {@code jre/} (a
 * jlink image of the modules the agent needs), {@code agent/paddock-agent.jar} and {@code
 * agent-jvm.options} (one option per line, comments removed). Its name is a digest of what went
 * into it, so a host that has a bundle of that name has exactly this one.
 *
 * <p>Built once into {@code <cache>/<key>/} through a temporary directory renamed into place.
 * Thread-safe. (The backend kit's agent locator replaces this once it lands: the same layout as the
 * Docker backend's bundle.)
 *
 * @param dir where it is here
 * @param key its content key, also its directory name on every host
 */
record AgentBundle(Path dir, String key) {
  /** The modules the agent-server needs (as the Docker backend's bundle). */
  static final List<String> MODULES =
      List.of("java.base", "java.logging", "jdk.httpserver", "jdk.unsupported");

  private static final System.Logger LOG = System.getLogger("paddock.backend.ssh");
  private static final Object LOCK = new Object();

  /**
   * The bundle for this agent jar, built under {@code cache} if it is not there yet.
   *
   * @throws RuntimeStartException BINARY_MISSING when the jar is missing or this JVM has no jlink
   */
  static AgentBundle ensure(Path cache, Path agentJar, Optional<Path> jvmOptions) {
    if (!Files.isRegularFile(agentJar)) {
      throw missing("agent-server jar not found at " + agentJar + " (build it: ./paddock build)");
    }
    synchronized (LOCK) {
      try {
        String key = key(agentJar, jvmOptions);
        Path dir = cache.resolve(key);
        if (!Files.isRegularFile(dir.resolve(".complete"))) {
          build(cache, dir, agentJar, jvmOptions, key);
        }
        return new AgentBundle(dir, key);
      } catch (IOException e) {
        throw new UncheckedIOException("cannot build the agent runtime bundle in " + cache, e);
      }
    }
  }

  private static void build(
      Path cache, Path dir, Path agentJar, Optional<Path> jvmOptions, String key)
      throws IOException {
    Files.createDirectories(cache);
    Path temp = Files.createTempDirectory(cache, key + ".partial-");
    try {
      long t0 = System.nanoTime();
      jlink(temp.resolve("jre"));
      Files.createDirectories(temp.resolve("agent"));
      Files.copy(agentJar, temp.resolve("agent/paddock-agent.jar"));
      Files.write(temp.resolve("agent-jvm.options"), options(jvmOptions));
      Files.writeString(temp.resolve(".complete"), key + "\n");
      moveIntoPlace(temp, dir);
      LOG.log(
          System.Logger.Level.INFO,
          "ssh backend: built the agent runtime bundle {0} in {1} ms",
          dir,
          (System.nanoTime() - t0) / 1_000_000);
    } finally {
      deleteTree(temp);
    }
  }

  /** The JVM options without comments and blank lines, which {@code mapfile} would keep. */
  private static List<String> options(Optional<Path> file) throws IOException {
    if (file.isEmpty()) {
      return List.of("-XX:+UseSerialGC", "-Xmx64m", "-XX:TieredStopAtLevel=1");
    }
    return Files.readAllLines(file.get()).stream()
        .map(String::strip)
        .filter(line -> !line.isEmpty() && !line.startsWith("#"))
        .toList();
  }

  private static void moveIntoPlace(Path temp, Path dir) throws IOException {
    try {
      Files.move(temp, dir, StandardCopyOption.ATOMIC_MOVE);
    } catch (FileAlreadyExistsException | AtomicMoveNotSupportedException e) {
      if (!Files.isRegularFile(dir.resolve(".complete"))) {
        throw e;
      }
      // Another control plane on this machine built it first: theirs is as good as ours.
    }
  }

  /** A short digest of everything that goes into the bundle. */
  static String key(Path agentJar, Optional<Path> jvmOptions) throws IOException {
    MessageDigest digest;
    try {
      digest = MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new AssertionError("every JDK has SHA-256", e);
    }
    try (InputStream in = Files.newInputStream(agentJar)) {
      byte[] buffer = new byte[64 * 1024];
      for (int n; (n = in.read(buffer)) > 0; ) {
        digest.update(buffer, 0, n);
      }
    }
    digest.update(String.join("\n", options(jvmOptions)).getBytes(StandardCharsets.UTF_8));
    digest.update(Runtime.version().toString().getBytes(StandardCharsets.UTF_8));
    digest.update(String.join(",", MODULES).getBytes(StandardCharsets.UTF_8));
    return "agent-" + HexFormat.of().formatHex(digest.digest()).substring(0, 16);
  }

  private static void jlink(Path output) {
    ToolProvider jlink =
        ToolProvider.findFirst("jlink")
            .orElseThrow(
                () ->
                    missing(
                        "the ssh backend builds its agent runtime with jlink, which this Java"
                            + " runtime lacks: run the control plane on a JDK (21 or newer)"));
    ByteArrayOutputStream log = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(log, true, StandardCharsets.UTF_8);
    int code =
        jlink.run(
            out,
            out,
            "--add-modules",
            String.join(",", MODULES),
            "--output",
            output.toString(),
            "--strip-debug",
            "--no-header-files",
            "--no-man-pages",
            "--generate-cds-archive");
    if (code != 0) {
      throw missing("jlink failed (" + code + "): " + log.toString(StandardCharsets.UTF_8).trim());
    }
  }

  private static RuntimeStartException missing(String detail) {
    return RuntimeStartException.of(RuntimeFailure.Kind.BINARY_MISSING, detail, null);
  }

  private static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
