package dev.paddock.bench;

import dev.paddock.backend.kit.protocol.ReadyLine;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * An agent-server started as a separate process, the way production starts it: the running JDK's
 * {@code java}, the options file {@code agent-jvm.options} (as an {@code @file} argument), the AOT
 * cache when asked and present, {@code -jar paddock-agent-server-all.jar --secrets-stdin}, and a
 * random session key written to its standard input. It binds loopback only ({@code --host
 * 127.0.0.1}; with keys set the agent would otherwise bind every interface) on a port it picks
 * itself ({@code --port 0}), read back from its "listening on" line, which is also the readiness
 * signal. Its workspace and spool live in a temporary folder removed on {@link #close()}. The
 * process and the folder are registered with the bench's {@link Cleanup} as soon as they exist, so
 * they go even when the bench dies half-way; closing twice is harmless.
 */
final class AgentProcess implements AutoCloseable {
  private static final Duration START_TIMEOUT = Duration.ofSeconds(30);
  private static final SecureRandom RANDOM = new SecureRandom();

  private final ChildProcess child;
  private final Path dir;
  private final String sessionKey;
  private final int port;
  private final long startNanos;

  private AgentProcess(ChildProcess child, Path dir, String key, int port, long startNanos) {
    this.child = child;
    this.dir = dir;
    this.sessionKey = key;
    this.port = port;
    this.startNanos = startNanos;
  }

  /**
   * Starts an agent and waits until it listens; {@code withAotCache} adds the cache when the
   * checkout has one. The caller closes it.
   */
  static AgentProcess start(Checkout checkout, boolean withAotCache, Cleanup cleanup)
      throws IOException, InterruptedException {
    Path dir = cleanup.tempDir("paddock-bench-agent-");
    Path workspace = Files.createDirectories(dir.resolve("workspace"));
    Path stderr = dir.resolve("agent.stderr");
    ProcessBuilder builder =
        new ProcessBuilder(command(checkout, withAotCache, workspace, dir.resolve("events")))
            .directory(checkout.root().toFile())
            .redirectError(stderr.toFile());
    String key = randomKey();
    long startNanos = System.nanoTime();
    ChildProcess child = cleanup.register(new ChildProcess(builder.start()));
    try (OutputStream stdin = child.process().getOutputStream()) {
      stdin.write(("session_api_key=" + key + "\n").getBytes(StandardCharsets.UTF_8));
    }
    int port = awaitListening(child, stderr);
    return new AgentProcess(child, dir, key, port, startNanos);
  }

  private static List<String> command(
      Checkout checkout, boolean withAotCache, Path workspace, Path events) {
    List<String> argv = new ArrayList<>();
    argv.add(checkout.java().toString());
    argv.add("@" + checkout.jvmOptions());
    if (withAotCache) {
      checkout.aotCache().ifPresent(aot -> argv.add("-XX:AOTCache=" + aot));
    }
    argv.addAll(
        List.of(
            "-jar",
            checkout.agentJar().toString(),
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--workspace",
            workspace.toString(),
            "--events-dir",
            events.toString(),
            "--secrets-stdin"));
    return argv;
  }

  /** Reads stdout until the "listening on" line, then keeps draining it on a daemon thread. */
  private static int awaitListening(ChildProcess child, Path stderr)
      throws IOException, InterruptedException {
    CompletableFuture<Integer> port = new CompletableFuture<>();
    BufferedReader out =
        new BufferedReader(
            new InputStreamReader(child.process().getInputStream(), StandardCharsets.UTF_8));
    Thread.ofPlatform().daemon().name("agent-stdout-" + child.pid()).start(() -> drain(out, port));
    try {
      return port.get(START_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (ExecutionException | TimeoutException e) {
      throw new IllegalStateException(failedStart(child, stderr, e), e);
    }
  }

  private static void drain(BufferedReader out, CompletableFuture<Integer> port) {
    try (out) {
      for (String line = out.readLine(); line != null; line = out.readLine()) {
        Optional<ReadyLine> ready = ReadyLine.parse(line);
        if (!port.isDone() && ready.isPresent()) {
          port.complete(ready.get().port());
        }
      }
      port.completeExceptionally(new IOException("stdout closed before the listening line"));
    } catch (IOException e) {
      port.completeExceptionally(e);
    }
  }

  private static String failedStart(ChildProcess child, Path stderr, Exception cause) {
    String exit =
        child.process().isAlive()
            ? "still running after " + START_TIMEOUT.toSeconds() + " s"
            : "exited with status " + child.process().exitValue();
    String errors;
    try {
      errors = Files.readString(stderr).strip();
    } catch (IOException e) {
      errors = "(stderr unreadable: " + e.getMessage() + ")";
    }
    return "agent-server did not start ("
        + exit
        + "; "
        + cause.getMessage()
        + "); its stderr: "
        + (errors.isEmpty() ? "(empty)" : errors);
  }

  private static String randomKey() {
    byte[] bytes = new byte[24];
    RANDOM.nextBytes(bytes);
    return HexFormat.of().formatHex(bytes);
  }

  String sessionKey() {
    return sessionKey;
  }

  int port() {
    return port;
  }

  long pid() {
    return child.pid();
  }

  /** {@link System#nanoTime()} just before the process was started. */
  long startNanos() {
    return startNanos;
  }

  /** A new keep-alive connection carrying this agent's session key. */
  HttpConnection connect() throws IOException {
    return HttpConnection.open(port, sessionKey);
  }

  /** Resident set size of the agent's JVM now, in MiB (VmRSS of /proc/PID/status). */
  double rssMiB() throws IOException {
    return Rss.ofPid(pid());
  }

  /** Stops the agent (SIGTERM, then SIGKILL after a grace) and deletes its folder. */
  @Override
  public void close() {
    try {
      child.close();
    } finally {
      Cleanup.deleteTree(dir);
    }
  }
}
