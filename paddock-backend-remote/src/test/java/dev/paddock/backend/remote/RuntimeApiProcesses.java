package dev.paddock.backend.remote;

import dev.paddock.backend.process.ProcessBackendProvider;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Real runtime APIs, each its own JVM ({@code RuntimeApiMain}, what {@code paddock runtime-api}
 * runs) on a free loopback port with the process backend under it and its own data directory.
 */
final class RuntimeApiProcesses implements AutoCloseable {
  static final String KEY_PREFIX = "runtime-api-key-of-host-";
  private static final Pattern LISTENING = Pattern.compile("listening on (http://\\S+)");

  record Host(Process process, String url, String key, Path dataDir) {}

  private final List<Host> hosts = new ArrayList<>();
  private final int maxSandboxes;

  private RuntimeApiProcesses(int maxSandboxes) {
    this.maxSandboxes = maxSandboxes;
  }

  /** Starts {@code count} runtime APIs holding up to {@code maxSandboxes} sessions each. */
  static RuntimeApiProcesses start(int count, int maxSandboxes) {
    RuntimeApiProcesses started = new RuntimeApiProcesses(maxSandboxes);
    try {
      for (int i = 0; i < count; i++) {
        started.hosts.add(startOne(KEY_PREFIX + i, maxSandboxes));
      }
    } catch (RuntimeException e) {
      started.close();
      throw e;
    }
    return started;
  }

  private static Host startOne(String key, int maxSandboxes) {
    try {
      return startOne(key, maxSandboxes, Files.createTempDirectory("paddock-runtime-api-"), 0);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Stops host {@code index} as a shutdown does (SIGTERM: its runtimes keep running) and starts a
   * new runtime API process on the same data directory and port.
   */
  void restart(int index) {
    Host old = hosts.get(index);
    old.process().destroy();
    try {
      if (!old.process().waitFor(20, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the runtime API did not stop within 20 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
    int port = java.net.URI.create(old.url()).getPort();
    hosts.set(index, startOne(old.key(), maxSandboxes, old.dataDir(), port));
  }

  private static Host startOne(String key, int maxSandboxes, Path data, int port) {
    try {
      ProcessBuilder builder =
          new ProcessBuilder(
              Path.of(System.getProperty("java.home"), "bin", "java").toString(),
              "-XX:TieredStopAtLevel=1",
              "-cp",
              System.getProperty("java.class.path"),
              "dev.paddock.runtimeapi.RuntimeApiMain");
      Map<String, String> env = builder.environment();
      env.put("RUNTIME", "process");
      env.put("PADDOCK_DATA_DIR", data.toString());
      env.put("PADDOCK_RUNTIME_API_PORT", Integer.toString(port));
      env.put("PADDOCK_RUNTIME_API_KEY", key);
      env.put("PADDOCK_RUNTIME_API_MAX_SANDBOXES", Integer.toString(maxSandboxes));
      env.put("agent.command", ProcessBackendProvider.classPathAgentCommand());
      env.put("process.stop-grace", "3s");
      builder.redirectError(
          ProcessBuilder.Redirect.appendTo(data.resolve("runtime-api.log").toFile()));
      Process process = builder.start();
      return new Host(process, awaitUrl(process, data), key, data);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String awaitUrl(Process process, Path data) {
    BufferedReader out =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    CompletableFuture<String> url =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                for (String line; (line = out.readLine()) != null; ) {
                  Matcher m = LISTENING.matcher(line);
                  if (m.find()) {
                    return m.group(1);
                  }
                }
                throw new IllegalStateException("runtime API exited before listening");
              } catch (IOException e) {
                throw new UncheckedIOException(e);
              }
            });
    try {
      return url.get(60, TimeUnit.SECONDS);
    } catch (Exception e) {
      process.destroyForcibly();
      throw new IllegalStateException(
          "runtime API did not start; its log: " + log(data.resolve("runtime-api.log")), e);
    }
  }

  private static String log(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      return e.toString();
    }
  }

  List<Host> hosts() {
    return hosts;
  }

  /** {@code PADDOCK_REMOTE_RUNTIMES} for these hosts. */
  String setting() {
    return hosts.stream().map(h -> h.url() + "=" + h.key()).collect(Collectors.joining(","));
  }

  /** A remote backend over these hosts, naming itself {@code client} to them. */
  dev.paddock.api.spi.SandboxBackend backend(String client) {
    return new RemoteBackendProvider()
        .create(
            java.util.Map.of(
                "PADDOCK_REMOTE_RUNTIMES", setting(), "PADDOCK_REMOTE_CLIENT", client));
  }

  /**
   * Live processes working in the runtime APIs' data directories (their agents, also those a
   * stopped runtime API left to its successor, which are no longer its descendants).
   */
  List<Long> processesInDataDirs() {
    List<Long> found = new ArrayList<>();
    for (Host host : hosts) {
      String prefix = host.dataDir().toString();
      ProcessHandle.allProcesses()
          .filter(ProcessHandle::isAlive)
          .filter(p -> p.info().commandLine().orElse("").contains(prefix) || cwdUnder(p, prefix))
          .forEach(p -> found.add(p.pid()));
    }
    return found;
  }

  private static boolean cwdUnder(ProcessHandle process, String prefix) {
    try {
      return Files.readSymbolicLink(Path.of("/proc", Long.toString(process.pid()), "cwd"))
          .toString()
          .startsWith(prefix);
    } catch (IOException | UnsupportedOperationException e) {
      return false; // gone meanwhile, or not ours to read
    }
  }

  /** Live processes under the runtime APIs (their agents). */
  List<ProcessHandle> agents() {
    return hosts.stream()
        .flatMap(h -> h.process().toHandle().descendants())
        .filter(ProcessHandle::isAlive)
        .toList();
  }

  /** Sandbox directories left in the runtime APIs' data directories. */
  List<Path> sandboxDirs() throws IOException {
    List<Path> left = new ArrayList<>();
    for (Host host : hosts) {
      Path sandboxes = host.dataDir().resolve("sandboxes");
      if (Files.isDirectory(sandboxes)) {
        try (var dirs = Files.list(sandboxes)) {
          dirs.forEach(left::add);
        }
      }
    }
    return left;
  }

  @Override
  public void close() {
    for (Host host : hosts) {
      host.process().destroy();
      try {
        if (!host.process().waitFor(Duration.ofSeconds(20).toMillis(), TimeUnit.MILLISECONDS)) {
          host.process().destroyForcibly().waitFor();
        }
        deleteTree(host.dataDir());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  private static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (var paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
