package dev.paddock.agent;

import dev.paddock.backend.kit.protocol.ReadyLine;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The agent-server as a process of its own ({@code AgentServerMain} on this JVM's class path,
 * without session keys, on a loopback port 0), for what only a JVM of its own shows: capabilities,
 * signal dispositions. Closing it stops the agent and every process it left.
 */
final class AgentProcess implements AutoCloseable {
  private final Process process;
  private final int port;
  private final HttpClient http = HttpClient.newHttpClient();

  private AgentProcess(Process process, int port) {
    this.process = process;
    this.port = port;
  }

  /**
   * Starts the agent through {@code launcher} (a command that ends by running its arguments, e.g.
   * {@code setpriv ... --}; may be empty) with {@code options} after the defaults, and waits for
   * its ready line.
   */
  static AgentProcess start(List<String> launcher, Path dir, List<String> options)
      throws IOException {
    List<String> argv = new ArrayList<>(launcher);
    argv.addAll(
        List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-XX:TieredStopAtLevel=1",
            "-XX:+UseSerialGC",
            "--enable-native-access=ALL-UNNAMED",
            "-cp",
            System.getProperty("java.class.path"),
            AgentServerMain.class.getName(),
            "--port",
            "0",
            "--no-fork-server",
            "--workspace",
            dir.resolve("workspace").toString(),
            "--events-dir",
            dir.resolve("events").toString()));
    argv.addAll(options);
    Files.createDirectories(dir);
    Process process = new ProcessBuilder(argv).redirectErrorStream(true).start();
    process.getOutputStream().close();
    try {
      return new AgentProcess(process, readyPort(process));
    } catch (IOException | RuntimeException | Error e) {
      process.destroyForcibly();
      throw e;
    }
  }

  long pid() {
    return process.pid();
  }

  boolean isAlive() {
    return process.isAlive();
  }

  HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return http.send(
        HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(30)).GET().build(),
        HttpResponse.BodyHandlers.ofString());
  }

  HttpResponse<String> post(String path, String json) throws IOException, InterruptedException {
    return http.send(
        HttpRequest.newBuilder(uri(path))
            .timeout(Duration.ofSeconds(60))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private URI uri(String path) {
    return URI.create("http://127.0.0.1:" + port + path);
  }

  /** A field of {@code /proc/<pid>/status} of {@code pid}, e.g. {@code CapEff}, as a hex mask. */
  static long statusMask(long pid, String field) throws IOException {
    for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
      if (line.startsWith(field + ":")) {
        return Long.parseUnsignedLong(line.substring(field.length() + 1).strip(), 16);
      }
    }
    throw new AssertionError("no " + field + " line for " + pid);
  }

  /** Stops the agent and what it left; a process that will not go fails the test. */
  @Override
  public void close() {
    try {
      List<ProcessHandle> tree = process.descendants().toList();
      process.destroy();
      if (!process.waitFor(20, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor();
      }
      for (ProcessHandle child : tree) {
        child.destroyForcibly();
        child.onExit().get(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted while stopping the agent", e);
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      throw new AssertionError("a process of the agent did not end", e);
    } finally {
      http.close();
    }
  }

  /** The port of {@code agent}'s ready line; its further output is drained in the background. */
  static int readyPort(Process agent) throws IOException {
    BufferedReader out =
        new BufferedReader(new InputStreamReader(agent.getInputStream(), StandardCharsets.UTF_8));
    for (String line; (line = out.readLine()) != null; ) {
      Optional<ReadyLine> ready = ReadyLine.parse(line);
      if (ready.isPresent()) {
        Thread.ofVirtual().start(() -> drain(out));
        return ready.get().port();
      }
    }
    throw new AssertionError("the agent exited before its ready line");
  }

  private static void drain(BufferedReader out) {
    try (out) {
      out.transferTo(java.io.Writer.nullWriter());
    } catch (IOException e) {
      // the agent is gone
    }
  }
}
