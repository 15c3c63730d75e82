package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.PageRequest;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxStatus;
import dev.paddock.backend.process.ProcessBackendProvider;
import dev.paddock.client.PaddockClient;
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
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code paddock server} as its own process, killed with SIGKILL while sandboxes start and run,
 * then started again on the same data dir: nothing is lost (every sandbox is still known, with a
 * true status) and nothing leaks (after deleting them, no agent process carrying their label is
 * left, even though the killed server's children were re-parented away from this JVM).
 */
class CrashRecoveryTest {
  private static final String ADMIN_KEY = "pdk_crash-test-admin-key-0123456789abcdef";
  private static final Pattern LISTENING = Pattern.compile("listening on (http://[^ ]+)");

  private static final List<Path> CGROUP_ROOTS = CgroupRoots.all();

  private Path dataDir;
  private Process server;
  private java.util.Set<Path> cgroupsBefore;
  private final List<String> startupLines = new ArrayList<>();

  @BeforeEach
  void createDataDir() throws IOException {
    dataDir = Files.createTempDirectory("paddock-crash-test-");
    cgroupsBefore = sandboxCgroups();
  }

  private static java.util.Set<Path> sandboxCgroups() throws IOException {
    java.util.Set<Path> found = new java.util.HashSet<>();
    for (Path root : CGROUP_ROOTS) {
      if (Files.isDirectory(root)) {
        try (var dirs = Files.list(root)) {
          dirs.filter(d -> d.getFileName().toString().startsWith("sb-")).forEach(found::add);
        }
      }
    }
    return found;
  }

  @AfterEach
  void stopAndCheck() throws Exception {
    if (server != null) {
      server.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }
    List<Long> left = labelledAgents();
    StringBuilder described = new StringBuilder();
    for (long pid : left) {
      described
          .append(pid)
          .append(' ')
          .append(
              Files.readString(Path.of("/proc", Long.toString(pid), "cmdline")).replace('\0', ' '))
          .append('\n');
    }
    for (long pid : left) {
      ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
    }
    try (var paths = Files.walk(dataDir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
    assertThat(left).as("agent processes left behind:\n" + described).isEmpty();
    var cgroups = sandboxCgroups();
    cgroups.removeAll(cgroupsBefore);
    assertThat(cgroups).as("cgroups left behind").isEmpty();
  }

  @Test
  void killNineMidStartLosesNothingAndLeaksNothing() throws Exception {
    String url = startServer();
    PaddockClient client = PaddockClient.connect(URI.create(url), ADMIN_KEY);
    SandboxInfo running = client.create(Optional.empty(), true, Duration.ofSeconds(60));
    SandboxInfo starting = client.create(Optional.empty(), false, Duration.ZERO);
    // A warning line of the server's log (text format: time, level, logger, message).
    assertThat(startupLines)
        .anySatisfy(
            line ->
                assertThat(line)
                    .contains(" WARN paddock.server - ")
                    .endsWith(
                        "unknown setting PADDOCK_PAUSE_OLDST (from env); did you mean"
                            + " PADDOCK_PAUSE_OLDEST?"));

    server.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    PaddockClient restarted = PaddockClient.connect(URI.create(startServer()), ADMIN_KEY);
    client = restarted;

    List<SandboxInfo> after = client.list(PageRequest.first(100)).items();
    assertThat(after)
        .extracting(SandboxInfo::id)
        .containsExactlyInAnyOrder(running.id(), starting.id());
    SandboxInfo adopted = client.get(running.id()).orElseThrow();
    assertThat(adopted.status()).as("a live agent is adopted").isEqualTo(SandboxStatus.RUNNING);
    Awaitility.await("the interrupted start settles")
        .atMost(Duration.ofSeconds(20))
        .until(
            () -> {
              Optional<SandboxInfo> s = restarted.get(starting.id());
              return s.isPresent() && s.get().status() != SandboxStatus.STARTING;
            });
    // A restarted control plane no longer knows plaintext keys: resume issues a working one.
    client.pause(running.id());
    SandboxInfo resumed = client.resume(running.id());
    StringBuilder out = new StringBuilder();
    assertThat(client.agent(resumed).exec("echo alive", 10, out::append, e -> {})).isZero();
    assertThat(out).hasToString("alive\n");

    for (SandboxInfo s : client.list(PageRequest.first(100)).items()) {
      client.delete(s.id());
    }
    assertThat(client.list(PageRequest.first(100)).items()).isEmpty();
    Awaitility.await("every agent gone")
        .atMost(Duration.ofSeconds(15))
        .until(() -> labelledAgents().isEmpty());
  }

  /** Starts {@code paddock server} on a free port and returns its URL once it listens. */
  private String startServer() throws IOException {
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    List<String> argv = new ArrayList<>();
    argv.addAll(
        List.of(
            java.toString(),
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
    builder.environment().put("PADDOCK_ADMIN_KEY", ADMIN_KEY);
    builder.environment().put("agent.command", ProcessBackendProvider.classPathAgentCommand());
    builder.environment().put("process.stop-grace", "3s");
    builder.environment().put("process.ready-timeout", "10s");
    builder.environment().put("PADDOCK_RECONCILE_SECONDS", "1");
    builder.environment().put("PADDOCK_START_TIMEOUT_SECONDS", "10");
    builder.environment().put("PADDOCK_REPLICA_LEASE_SECONDS", "2");
    // A typo is no reason to refuse to start, but the real command says what was meant.
    builder.environment().put("PADDOCK_PAUSE_OLDST", "false");
    server = builder.start();
    BufferedReader lines =
        new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8));
    String line;
    while ((line = lines.readLine()) != null) {
      startupLines.add(line);
      Matcher m = LISTENING.matcher(line);
      if (m.find()) {
        Thread drain = new Thread(() -> lines.lines().forEach(l -> {}));
        drain.setDaemon(true);
        drain.start();
        return m.group(1);
      }
    }
    throw new IllegalStateException("paddock server exited with " + server.exitValue());
  }

  /** Pids of live processes labelled by a sandbox of this test's data dir. */
  private List<Long> labelledAgents() throws IOException {
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
