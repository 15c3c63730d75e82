package dev.paddock.hardening.load;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The machine's floor for a {@code GET /health}: the JDK's own {@code jwebserver}, in a JVM of its
 * own that does nothing else, serving a file named {@code health} that holds {@code
 * {"status":"ok"}}. Timed by a {@link HealthSampler} of its own beside the control plane's, under
 * the same load on the same cores, it tells how much of the control plane's figure any idle JVM
 * HTTP server on this machine would show (the samplers' own wake-ups, the run queue) and how much
 * is the control plane's. Information only: nothing is asserted on it.
 */
final class FloorServer implements AutoCloseable {
  private static final Pattern PORT = Pattern.compile("port (\\d+)");

  private final Process process;
  private final String url;

  private FloorServer(Process process, String url) {
    this.process = process;
    this.url = url;
  }

  /** Starts the server on a free loopback port, serving from {@code dir}; returns once it binds. */
  static FloorServer start(Path dir) throws IOException {
    Files.writeString(dir.resolve("health"), "{\"status\":\"ok\"}");
    Path jwebserver = Path.of(System.getProperty("java.home"), "bin", "jwebserver");
    Process process =
        new ProcessBuilder(jwebserver.toString(), "-p", "0", "-d", dir.toString(), "-o", "none")
            .redirectErrorStream(true)
            .start();
    try {
      BufferedReader out =
          new BufferedReader(
              new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
      // It prints its port at once; a reader thread keeps a silent one from hanging the test.
      int port = CompletableFuture.supplyAsync(() -> port(out)).get(30, TimeUnit.SECONDS);
      Thread.ofVirtual().start(() -> drain(out));
      return new FloorServer(process, "http://127.0.0.1:" + port);
    } catch (InterruptedException | ExecutionException | TimeoutException e) {
      stop(process);
      throw new IOException("jwebserver did not say its port", e);
    }
  }

  String url() {
    return url;
  }

  private static int port(BufferedReader out) {
    try {
      for (String line = out.readLine(); line != null; line = out.readLine()) {
        Matcher m = PORT.matcher(line);
        if (m.find()) {
          return Integer.parseInt(m.group(1));
        }
      }
      throw new IllegalStateException("jwebserver exited before it said its port");
    } catch (IOException e) {
      throw new IllegalStateException(e);
    }
  }

  private static void drain(BufferedReader out) {
    try {
      while (out.readLine() != null) {
        // jwebserver with -o none prints nothing more; read whatever it does till it exits.
      }
    } catch (IOException e) {
      // The process went away.
    }
  }

  private static void stop(Process process) {
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
  }

  @Override
  public void close() {
    stop(process);
  }
}
