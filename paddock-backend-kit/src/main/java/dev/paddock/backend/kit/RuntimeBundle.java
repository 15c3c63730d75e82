package dev.paddock.backend.kit;

import dev.paddock.api.KeyDigest;
import dev.paddock.backend.kit.protocol.AgentSecrets;
import dev.paddock.backend.kit.protocol.ReadyLine;
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
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.spi.ToolProvider;
import java.util.stream.Stream;

/**
 * The self-contained agent runtime every sandbox container mounts read-only at {@code
 * /opt/paddock}: a JRE cut down by jlink (with its default CDS archive), the agent-server's shaded
 * jar, its JVM options and the entry script that checks the image contract. Nothing of Paddock has
 * to be in the sandbox image, so any glibc image with {@code /bin/sh}, bash and setpriv works.
 *
 * <p>Built once per (agent jar, JDK) pair into {@code <cache>/<key>/}, in a temporary directory
 * renamed into place, so a crash never leaves a half bundle that looks whole; the key is a digest
 * of everything in it, so a copy on another host (SSH) can be checked by name. Used by every
 * backend that runs the agent where no JDK is (containers, remote hosts). Thread-safe.
 *
 * <p>Layout: {@code jre/} (the JRE), {@code agent/paddock-agent.jar}, {@code agent-jvm.options},
 * {@code agent.aot} (when trained), {@code bin/paddock-sandbox} (the entry script: checks glibc,
 * bash, setpriv and the callback URL, exit codes 121-124, then runs the agent), {@code .complete}.
 */
public final class RuntimeBundle {
  /** Where containers see the bundle. */
  public static final String MOUNT = "/opt/paddock";

  /** The modules the agent-server needs (jdeps, minus paths it never takes). */
  public static final List<String> MODULES =
      List.of("java.base", "java.logging", "jdk.httpserver", "jdk.unsupported");

  private static final System.Logger LOG = System.getLogger("paddock.backend.kit");
  private static final Object LOCK = new Object();

  private RuntimeBundle() {}

  /**
   * The bundle for {@code agent}, built under {@code cacheDir} if it is not there yet.
   *
   * @throws IllegalStateException when no jlink is available (the control plane runs on a JRE)
   */
  public static Path ensure(Path cacheDir, AgentDistribution agent) {
    return ensure(cacheDir, agent.jar(), agent.jvmOptions());
  }

  /**
   * The bundle for {@code agentJar}, built under {@code cacheDir} if it is not there yet.
   *
   * @param jvmOptions the agent's JVM options file, if any (one option per line)
   * @throws IllegalStateException when no jlink is available (the control plane runs on a JRE)
   */
  public static Path ensure(Path cacheDir, Path agentJar, Optional<Path> jvmOptions) {
    synchronized (LOCK) {
      try {
        String key = key(agentJar, jvmOptions);
        Path bundle = cacheDir.resolve(key);
        if (Files.isRegularFile(bundle.resolve(".complete"))) {
          return bundle;
        }
        Files.createDirectories(cacheDir);
        Path temp = Files.createTempDirectory(cacheDir, key + ".partial-");
        try {
          long t0 = System.nanoTime();
          build(temp, agentJar, jvmOptions);
          Files.writeString(temp.resolve(".complete"), key + "\n");
          moveIntoPlace(temp, bundle);
          LOG.log(
              System.Logger.Level.INFO,
              "built the agent runtime bundle {0} in {1} ms",
              bundle,
              (System.nanoTime() - t0) / 1_000_000);
        } finally {
          deleteTree(temp);
        }
        return bundle;
      } catch (IOException e) {
        throw new UncheckedIOException("cannot build the agent runtime bundle in " + cacheDir, e);
      }
    }
  }

  private static void moveIntoPlace(Path temp, Path bundle) throws IOException {
    try {
      Files.move(temp, bundle, StandardCopyOption.ATOMIC_MOVE);
    } catch (FileAlreadyExistsException | AtomicMoveNotSupportedException e) {
      if (!Files.isRegularFile(bundle.resolve(".complete"))) {
        throw e;
      }
      // Another control plane on this host built it first: theirs is as good as ours.
    } catch (IOException e) {
      if (!Files.isRegularFile(bundle.resolve(".complete"))) {
        throw e;
      }
    }
  }

  /** A short digest of everything that goes into the bundle. */
  public static String key(Path agentJar, Optional<Path> jvmOptions) throws IOException {
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
    if (jvmOptions.isPresent()) {
      digest.update(Files.readAllBytes(jvmOptions.get()));
    }
    digest.update(Runtime.version().toString().getBytes(StandardCharsets.UTF_8));
    digest.update(String.join(",", MODULES).getBytes(StandardCharsets.UTF_8));
    digest.update(entryScript());
    return "agent-" + HexFormat.of().formatHex(digest.digest()).substring(0, 16);
  }

  private static void build(Path dir, Path agentJar, Optional<Path> jvmOptions) throws IOException {
    jlink(dir.resolve("jre"));
    Path agentDir = Files.createDirectories(dir.resolve("agent"));
    Files.copy(agentJar, agentDir.resolve("paddock-agent.jar"));
    Path options = dir.resolve("agent-jvm.options");
    if (jvmOptions.isPresent()) {
      Files.copy(jvmOptions.get(), options);
    } else {
      Files.writeString(options, "-XX:+UseSerialGC\n-Xmx64m\n-XX:TieredStopAtLevel=1\n");
    }
    trainAotCache(dir);
    Path bin = Files.createDirectories(dir.resolve("bin"));
    Path entry = bin.resolve("paddock-sandbox");
    Files.write(entry, entryScript());
    Files.setPosixFilePermissions(entry, PosixFilePermissions.fromString("rwxr-xr-x"));
    // Readable by anyone: the mount is read-only, and the agent may run as any user.
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.toList()) {
        Files.setPosixFilePermissions(
            p,
            PosixFilePermissions.fromString(
                Files.isDirectory(p) || Files.isExecutable(p) ? "rwxr-xr-x" : "rw-r--r--"));
      }
    }
  }

  /**
   * On JDK 25+, an AOT cache for the bundle's own JRE and jar ({@code agent.aot}), which roughly
   * halves the agent's start in every container: a real agent runs on loopback with {@code
   * -XX:AOTCacheOutput}, the agent jar's {@code AotTraining} drives its hot routes from a second
   * JVM, and SIGTERM makes it write the cache. The JVM accepts the cache at {@code /opt/paddock}
   * although it was written elsewhere (the class path is matched after its common prefix). Best
   * effort: without a cache the agent starts from the default CDS archive.
   */
  private static void trainAotCache(Path dir) {
    if (Runtime.version().feature() < 25) {
      return;
    }
    Path javaBin = dir.resolve("jre/bin/java");
    Path jar = dir.resolve("agent/paddock-agent.jar");
    Path cache = dir.resolve("agent.aot");
    Path work = null;
    Process agent = null;
    try {
      work = Files.createTempDirectory("paddock-aot-training-");
      Path workspace = Files.createDirectories(work.resolve("workspace"));
      String key = java.util.UUID.randomUUID().toString();
      List<String> argv = new java.util.ArrayList<>();
      argv.add(javaBin.toString());
      argv.addAll(jvmOptions(dir.resolve("agent-jvm.options")));
      argv.addAll(
          List.of(
              "-Xlog:disable",
              "-XX:AOTCacheOutput=" + cache,
              "-jar",
              jar.toString(),
              "--host",
              "127.0.0.1",
              "--port",
              "0",
              "--workspace",
              workspace.toString(),
              "--events-dir",
              work.resolve("events").toString(),
              "--secrets-stdin"));
      agent = new ProcessBuilder(argv).redirectError(ProcessBuilder.Redirect.DISCARD).start();
      try (var stdin = agent.getOutputStream()) {
        stdin.write(
            AgentSecrets.lines(List.of(KeyDigest.sha256Hex(key)), "")
                .getBytes(StandardCharsets.UTF_8));
      }
      var lines =
          new java.io.BufferedReader(
              new java.io.InputStreamReader(agent.getInputStream(), StandardCharsets.UTF_8));
      OptionalInt port = OptionalInt.empty();
      for (String line; port.isEmpty() && (line = lines.readLine()) != null; ) {
        port = ReadyLine.parse(line).map(r -> OptionalInt.of(r.port())).orElse(port);
      }
      if (port.isEmpty()) {
        throw new IOException("the training agent exited before it was ready");
      }
      // Whatever it prints from now on (the cache report at exit) must not fill the pipe.
      Thread.ofVirtual().start(() -> drain(lines));
      Process driver =
          new ProcessBuilder(
                  javaBin.toString(),
                  "-cp",
                  jar.toString(),
                  "dev.paddock.agent.AotTraining",
                  Integer.toString(port.getAsInt()),
                  key,
                  workspace.toString())
              .redirectErrorStream(true)
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
      if (!driver.waitFor(120, java.util.concurrent.TimeUnit.SECONDS) || driver.exitValue() != 0) {
        driver.destroyForcibly();
        throw new IOException("the training driver failed");
      }
      agent.destroy(); // SIGTERM: the JVM writes the cache as it exits
      if (!agent.waitFor(120, java.util.concurrent.TimeUnit.SECONDS)) {
        throw new IOException("the training agent did not exit");
      }
      if (!Files.isRegularFile(cache) || Files.size(cache) == 0) {
        throw new IOException("no AOT cache was written");
      }
    } catch (IOException e) {
      LOG.log(
          System.Logger.Level.WARNING,
          "no AOT cache for the agent runtime ({0}); agents start without it",
          e.getMessage());
      deleteQuietly(cache);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      deleteQuietly(cache);
    } finally {
      if (agent != null && agent.isAlive()) {
        agent.destroyForcibly();
      }
      if (work != null) {
        try {
          deleteTree(work);
        } catch (IOException e) {
          LOG.log(System.Logger.Level.WARNING, "cannot remove {0}: {1}", work, e.getMessage());
        }
      }
    }
  }

  private static void drain(java.io.Reader reader) {
    try (reader) {
      reader.transferTo(java.io.Writer.nullWriter());
    } catch (IOException e) {
      // The agent is gone: nothing more to read.
    }
  }

  private static List<String> jvmOptions(Path file) throws IOException {
    return Files.readAllLines(file).stream()
        .map(String::trim)
        .filter(line -> !line.isEmpty() && !line.startsWith("#") && !line.startsWith("-Xlog"))
        .toList();
  }

  private static void deleteQuietly(Path file) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      LOG.log(System.Logger.Level.WARNING, "cannot remove {0}: {1}", file, e.getMessage());
    }
  }

  private static void jlink(Path output) {
    ToolProvider jlink =
        ToolProvider.findFirst("jlink")
            .orElseThrow(
                () ->
                    new IllegalStateException(
                        "the agent runtime bundle is built with jlink, which this Java runtime"
                            + " lacks: run the control plane on a JDK (21 or newer)"));
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
      throw new IllegalStateException(
          "jlink failed (" + code + "): " + log.toString(StandardCharsets.UTF_8).trim());
    }
  }

  /** The entry script {@code bin/paddock-sandbox} (exit codes 121-124, see the script). */
  public static byte[] entryScript() {
    try (InputStream in = RuntimeBundle.class.getResourceAsStream("paddock-sandbox.sh")) {
      if (in == null) {
        throw new IllegalStateException("paddock-sandbox.sh is missing from the class path");
      }
      return in.readAllBytes();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
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
