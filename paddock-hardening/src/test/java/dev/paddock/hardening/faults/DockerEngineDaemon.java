package dev.paddock.hardening.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.http.Json;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The host's Docker Engine, stopped and started again the way it was started: {@code dockerd} as a
 * plain daemon (as {@code .ci/docker.sh} starts it), relaunched with the command line, environment,
 * working directory and output file the running one has (read from {@code /proc}), in a session of
 * its own so it is no child of the test. Its configuration ({@code /etc/docker/daemon.json}: the
 * runsc runtimes) is read again at start, so it comes back the same; after each test it is started
 * again if it is down (also when the test failed), and the test fails unless it runs with the same
 * command line and every runtime it had before.
 *
 * <p>Restarting the engine stops every container on the host, so it runs only where that is meant:
 * with {@code PADDOCK_TEST_RESTART_DOCKERD=true} (set by {@code .ci/docker.sh}, under the test
 * lock), skipped otherwise; and only on an engine that is not managed by systemd.
 */
final class DockerEngineDaemon implements BeforeEachCallback, AfterEachCallback {
  private static final Path PID_FILE = Path.of("/var/run/docker.pid");

  private List<String> argv;
  private Map<String, String> environment;
  private Path workingDir;
  private Path log;
  private String runtimes;
  private long pid;
  private boolean stopped;

  @Override
  public void beforeEach(ExtensionContext context) throws Exception {
    Assumptions.assumeTrue(
        "true".equals(System.getenv("PADDOCK_TEST_RESTART_DOCKERD")),
        "restarting dockerd stops every container on the host:"
            + " set PADDOCK_TEST_RESTART_DOCKERD=true to run it (CI does)");
    Assumptions.assumeTrue(Files.isRegularFile(PID_FILE), "no " + PID_FILE + ": no dockerd here");
    pid = Long.parseLong(Files.readString(PID_FILE).trim());
    Path proc = Path.of("/proc/" + pid);
    Assumptions.assumeFalse(
        Files.readString(proc.resolve("cgroup")).contains("docker.service"),
        "dockerd is a systemd service here; this test restarts the plain daemon CI starts");
    argv = nulSeparated(Files.readAllBytes(proc.resolve("cmdline")));
    environment = new LinkedHashMap<>();
    for (String entry : nulSeparated(Files.readAllBytes(proc.resolve("environ")))) {
      int eq = entry.indexOf('=');
      if (eq > 0) {
        environment.put(entry.substring(0, eq), entry.substring(eq + 1));
      }
    }
    workingDir = Files.readSymbolicLink(proc.resolve("cwd"));
    Path out = Files.readSymbolicLink(proc.resolve("fd/1"));
    log = Files.isRegularFile(out) ? out : Path.of("/dev/null");
    runtimes = docker("info", "--format", "{{json .Runtimes}}");
  }

  @Override
  public void afterEach(ExtensionContext context) throws Exception {
    if (argv == null) {
      return;
    }
    if (stopped) {
      start();
    }
    long now = Long.parseLong(Files.readString(PID_FILE).trim());
    assertThat(nulSeparated(Files.readAllBytes(Path.of("/proc/" + now + "/cmdline"))))
        .as("dockerd's command line")
        .isEqualTo(argv);
    // A fresh dockerd also lists its built-in containerd shims, which a reload (the SIGHUP that
    // registered runsc) drops from the listing: every runtime it had must be there, the same.
    assertThat(runtimes(docker("info", "--format", "{{json .Runtimes}}")))
        .as("dockerd's runtimes")
        .containsAllEntriesOf(runtimes(runtimes));
  }

  /** Whether the engine keeps containers running while it is down (it does not by default). */
  boolean liveRestore() throws Exception {
    return docker("info", "--format", "{{.LiveRestoreEnabled}}").trim().equals("true");
  }

  /** Stops dockerd (SIGTERM, as {@code kill} would) and returns once it has exited. */
  void stop() throws Exception {
    ProcessHandle daemon = ProcessHandle.of(pid).orElseThrow();
    stopped = true;
    daemon.destroy();
    daemon.onExit().get(90, TimeUnit.SECONDS);
  }

  /** Starts dockerd as it was started and returns once it answers. */
  void start() throws Exception {
    List<String> command = new ArrayList<>(List.of("setsid", "-f"));
    command.addAll(argv);
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .directory(workingDir.toFile())
            .redirectInput(new File("/dev/null"))
            .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
            .redirectErrorStream(true);
    builder.environment().clear();
    builder.environment().putAll(environment);
    Process launcher = builder.start();
    assertThat(launcher.waitFor(30, TimeUnit.SECONDS)).as("setsid -f dockerd").isTrue();
    Awaitility.await("dockerd answers again")
        .atMost(Duration.ofSeconds(90))
        .pollInterval(Duration.ofMillis(200))
        .until(this::answers);
    pid = Long.parseLong(Files.readString(PID_FILE).trim());
    stopped = false;
  }

  private boolean answers() {
    try {
      Process info = new ProcessBuilder("docker", "info").redirectErrorStream(true).start();
      info.getInputStream().readAllBytes();
      return info.waitFor(30, TimeUnit.SECONDS) && info.exitValue() == 0;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** A docker CLI call's output; fails the test when it exits non-zero. */
  static String docker(String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of("docker"));
    command.addAll(Arrays.asList(args));
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).as(String.join(" ", command)).isTrue();
    assertThat(process.exitValue()).as(String.join(" ", command) + ": " + out).isZero();
    return out;
  }

  private static Map<Object, Object> runtimes(String json) {
    Map<Object, Object> runtimes = new LinkedHashMap<>();
    ((Map<?, ?>) Json.parseAny(json.trim().getBytes(StandardCharsets.UTF_8)))
        .forEach(runtimes::put);
    return runtimes;
  }

  private static List<String> nulSeparated(byte[] bytes) {
    List<String> parts = new ArrayList<>();
    int from = 0;
    for (int i = 0; i < bytes.length; i++) {
      if (bytes[i] == 0) {
        parts.add(new String(bytes, from, i - from, StandardCharsets.UTF_8));
        from = i + 1;
      }
    }
    if (from < bytes.length) {
      parts.add(new String(bytes, from, bytes.length - from, StandardCharsets.UTF_8));
    }
    return parts;
  }
}
