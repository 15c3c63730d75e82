package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.Page;
import dev.paddock.api.PageRequest;
import dev.paddock.api.SandboxInfo;
import dev.paddock.backend.process.ProcessBackendProvider;
import dev.paddock.client.PaddockClient;
import dev.paddock.client.PaddockClientException;
import dev.paddock.controlplane.CgroupRoots;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * {@code paddock server} as its own process on port 0 with the process backend and a temporary data
 * dir, and the CLI run as its own process against it ({@link #cli}). After each test: the server is
 * stopped, and the test fails if an agent process of its data dir or a sandbox cgroup is left
 * behind; the data dir is removed. Public, in this module's test-jar, for the suites of {@code
 * paddock-hardening}.
 */
public final class ServerProcess implements BeforeEachCallback, AfterEachCallback {
  public static final String ADMIN_KEY = "pdk_cli-test-admin-key-0123456789abcdef0123";
  private static final Pattern LISTENING = Pattern.compile("listening on (https?://[^ ]+)");

  /**
   * JVM options of a test's server: C1 only and the serial collector. A test server lives for
   * seconds to a minute, mostly starting and reconciling; on two cores shared with its agents, C2's
   * compilations are CPU taken from them, and the crash cycles alone restart servers dozens of
   * times. Its behaviour does not depend on either. Suites that measure a server ({@link
   * #measured()}) run it as an operator would, with the JVM's defaults.
   */
  private static final List<String> SHORT_LIVED =
      List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC");

  private final List<String> jvmOptions;
  private Path dataDir;
  private Process server;
  private String url;
  private Set<Path> cgroupsBefore;

  /** A server for a test that checks behaviour ({@link #SHORT_LIVED} JVM options). */
  public ServerProcess() {
    this(SHORT_LIVED);
  }

  private ServerProcess(List<String> jvmOptions) {
    this.jvmOptions = jvmOptions;
  }

  /** A server for a suite that measures it (load, latency): the JVM's default options. */
  public static ServerProcess measured() {
    return new ServerProcess(List.of());
  }

  /** What one CLI run printed and how it exited. */
  record Run(int exit, String out, String err) {}

  @Override
  public void beforeEach(ExtensionContext context) throws IOException {
    dataDir = Files.createTempDirectory("paddock-cli-test-");
    cgroupsBefore = sandboxCgroups();
  }

  @Override
  public void afterEach(ExtensionContext context) throws Exception {
    if (dataDir == null) {
      return; // an extension before this one skipped the test: nothing was made
    }
    try {
      if (server != null && server.isAlive()) {
        deleteEverySandbox();
      }
    } finally {
      stop();
    }
    Awaitility.await("every agent of the test gone")
        .atMost(Duration.ofSeconds(15))
        .until(() -> labelledAgents().isEmpty());
    try (var paths = Files.walk(dataDir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
    Set<Path> cgroups = sandboxCgroups();
    cgroups.removeAll(cgroupsBefore);
    assertThat(cgroups).as("cgroups left behind").isEmpty();
  }

  /**
   * Deletes what the test left, through the API (a CLI run per call cost about a second of JVM
   * start each, for every test of the module); over TLS, whose certificate only the CLI finds in
   * the data dir, through the CLI. A delete that fails leaves its sandbox to the leak checks.
   */
  private void deleteEverySandbox() throws IOException, InterruptedException {
    if (url.startsWith("https:")) {
      Run left = cli("sandbox", "list", "--json");
      for (String id : ids(left.out())) {
        cli("sandbox", "delete", id);
      }
      return;
    }
    PaddockClient client = PaddockClient.connect(URI.create(url), ADMIN_KEY);
    List<String> ids = new ArrayList<>();
    PageRequest page = PageRequest.first(PageRequest.MAX_LIMIT);
    try {
      while (true) {
        Page<SandboxInfo> found = client.list(page);
        found.items().forEach(sandbox -> ids.add(sandbox.id()));
        if (found.nextPageId().isEmpty()) {
          break;
        }
        page = new PageRequest(found.nextPageId(), PageRequest.MAX_LIMIT);
      }
    } catch (PaddockClientException e) {
      // A server that cannot list any more (the test broke it) leaves the rest to the checks.
    }
    for (String id : ids) {
      try {
        client.delete(id);
      } catch (PaddockClientException e) {
        // Left to the leak checks below, which name what stayed.
      }
    }
  }

  /** Starts the server (again) on the data dir; returns its URL once it listens. */
  String start() throws IOException {
    return start(Map.of());
  }

  /** As {@link #start()}, with {@code settings} added to the server's environment. */
  public String start(Map<String, String> settings) throws IOException {
    Map<String, String> env = new java.util.HashMap<>();
    env.put("PADDOCK_ADMIN_KEY", ADMIN_KEY);
    env.put("agent.command", ProcessBackendProvider.classPathAgentCommand());
    env.put("process.stop-grace", "3s");
    env.put("PADDOCK_RECONCILE_SECONDS", "1");
    env.putAll(settings);
    Launched launched = launch(dataDir, env, jvmOptions);
    server = launched.process();
    url = launched.url();
    return url;
  }

  /** A started {@code paddock server} process and the URL it listens on. */
  record Launched(Process process, String url) {}

  /**
   * Starts {@code paddock server} on port 0 and {@code dataDir} as its own process with {@code env}
   * added to its environment, and returns once it listens (its output is drained from then on).
   */
  static Launched launch(Path dataDir, Map<String, String> env) throws IOException {
    return launch(dataDir, env, SHORT_LIVED);
  }

  private static Launched launch(Path dataDir, Map<String, String> env, List<String> jvmOptions)
      throws IOException {
    List<String> argv = new ArrayList<>();
    argv.add(java());
    argv.addAll(jvmOptions);
    argv.addAll(
        List.of(
            "--enable-native-access=ALL-UNNAMED",
            "-cp",
            System.getProperty("java.class.path"),
            "dev.paddock.cli.Main",
            "server",
            "--port",
            "0",
            "--data-dir",
            dataDir.toString()));
    ProcessBuilder builder = new ProcessBuilder(argv).redirectErrorStream(true);
    builder.environment().putAll(env);
    Process process = builder.start();
    BufferedReader lines =
        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    String line;
    while ((line = lines.readLine()) != null) {
      Matcher m = LISTENING.matcher(line);
      if (m.find()) {
        // Into the test's output (surefire keeps it per class): a failure shows what the server
        // logged. The stream closes when the test kills the server: the end of the log.
        String tag = "[server " + dataDir.getFileName() + "] ";
        Thread drain =
            new Thread(
                () -> {
                  try {
                    lines.lines().forEach(l -> System.out.println(tag + l));
                  } catch (java.io.UncheckedIOException e) {
                    System.out.println(tag + "(output closed)");
                  }
                });
        drain.setDaemon(true);
        drain.start();
        return new Launched(process, m.group(1));
      }
    }
    throw new IllegalStateException("paddock server ended before it listened");
  }

  /** Stops the server as an operator would (SIGTERM: its shutdown hooks run). */
  void stop() throws InterruptedException {
    if (server != null) {
      server.destroy();
      if (!server.waitFor(20, TimeUnit.SECONDS)) {
        server.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
  }

  /** Kills the server with SIGKILL: nothing of it runs. */
  void kill() throws InterruptedException {
    server.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
  }

  public Path dataDir() {
    return dataDir;
  }

  public String url() {
    return url;
  }

  /** The running server's process id, for what the test reads of it ({@code /proc}, jcmd). */
  public long pid() {
    return server.pid();
  }

  /**
   * Runs {@code paddock ARGS} as its own process that finds the server only through the data dir
   * (no {@code PADDOCK_URL}), with the admin key.
   */
  Run cli(String... args) throws IOException, InterruptedException {
    return cli(Map.of(), "", args);
  }

  /** As {@link #cli(String...)}, with {@code env} added and {@code stdin} as standard input. */
  Run cli(Map<String, String> env, String stdin, String... args)
      throws IOException, InterruptedException {
    List<String> argv = new ArrayList<>();
    // A CLI run lives for a second: with the short-lived options its CPU goes from ~1.3 to ~0.8 s
    // (measured here), which on two cores shared by the server and its agents is most of what the
    // module's hundreds of CLI runs cost.
    argv.add(java());
    argv.addAll(SHORT_LIVED);
    argv.addAll(List.of("-cp", System.getProperty("java.class.path"), "dev.paddock.cli.Main"));
    argv.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(argv);
    builder.environment().remove("PADDOCK_URL");
    builder.environment().put("PADDOCK_DATA_DIR", dataDir.toString());
    builder.environment().put("PADDOCK_API_KEY", ADMIN_KEY);
    builder.environment().putAll(env);
    Process cli = builder.start();
    CompletableFuture<String> out = CompletableFuture.supplyAsync(() -> read(cli, true));
    CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(cli, false));
    try (var in = cli.getOutputStream()) {
      in.write(stdin.getBytes(StandardCharsets.UTF_8));
    }
    if (!cli.waitFor(120, TimeUnit.SECONDS)) {
      cli.destroyForcibly().waitFor();
      throw new AssertionError("paddock " + String.join(" ", args) + " did not end");
    }
    return new Run(cli.exitValue(), out.join(), err.join());
  }

  private static String read(Process process, boolean out) {
    try (var in = out ? process.getInputStream() : process.getErrorStream()) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static String java() {
    return Path.of(System.getProperty("java.home"), "bin", "java").toString();
  }

  private static List<String> ids(String json) {
    List<String> ids = new ArrayList<>();
    Matcher m = Pattern.compile("\"id\" ?: ?\"([^\"]+)\"").matcher(json);
    while (m.find()) {
      ids.add(m.group(1));
    }
    return ids;
  }

  /** Sandbox cgroups that did not exist before the test. */
  public Set<Path> newCgroups() throws IOException {
    Set<Path> cgroups = sandboxCgroups();
    cgroups.removeAll(cgroupsBefore);
    return cgroups;
  }

  private static Set<Path> sandboxCgroups() throws IOException {
    Set<Path> found = new HashSet<>();
    for (Path root : CgroupRoots.all()) {
      if (Files.isDirectory(root)) {
        try (var dirs = Files.list(root)) {
          dirs.filter(d -> d.getFileName().toString().startsWith("sb-")).forEach(found::add);
        }
      }
    }
    return found;
  }

  /** Pids of live processes labelled by a sandbox of this test's data dir. */
  public List<Long> labelledAgents() throws IOException {
    List<Long> pids = new ArrayList<>();
    try (var procs = Files.list(Path.of("/proc"))) {
      for (Path proc : procs.filter(p -> p.getFileName().toString().matches("\\d+")).toList()) {
        try {
          String environ = Files.readString(proc.resolve("environ"), StandardCharsets.ISO_8859_1);
          String cmdline = Files.readString(proc.resolve("cmdline"), StandardCharsets.ISO_8859_1);
          if (environ.contains("PADDOCK_MANAGED=true") && cmdline.contains(dataDir.toString())) {
            pids.add(Long.parseLong(proc.getFileName().toString()));
          }
        } catch (IOException e) {
          // Gone meanwhile, or not ours to read.
        }
      }
    }
    return pids;
  }
}
