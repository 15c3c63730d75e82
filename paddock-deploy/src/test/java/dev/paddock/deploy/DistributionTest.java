package dev.paddock.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.controlplane.CgroupRoots;
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
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The distribution {@code ./paddock dist} makes, as a user gets it: the tarball unpacked into a
 * temporary directory away from the checkout and run from there with nothing pointing back (no
 * {@code PADDOCK_AGENT_JAR}, {@code HOME} and the working directory elsewhere, only {@code
 * JAVA_HOME} naming a JDK). Its own launcher runs the control plane on the process backend, whose
 * agent must come from the distribution's {@code lib/}; a sandbox is created, runs a command and is
 * deleted through the distribution's CLI; the same on the Docker backend when an engine is there.
 * Needs the shaded jars of {@code paddock-cli} and {@code paddock-agent-server} (built before this
 * module) and the shared test lock (it starts real agents, which the other modules' leak checks
 * would see).
 */
class DistributionTest {
  private static final Path CHECKOUT = Path.of("..").toAbsolutePath().normalize();
  private static final String ADMIN_KEY = "pdk_dist-test-admin-key-0123456789abcdef";
  private static final Pattern LISTENING = Pattern.compile("listening on (http://[^ ]+)");
  private static final Pattern SANDBOX_ID = Pattern.compile("\"id\"\\s*:\\s*\"(sb-[0-9a-f]+)\"");
  private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(90);

  private Path temp;
  private Path launcher;
  private Process server;
  private Set<Path> cgroupsBefore;
  private final List<String> sandboxes = new ArrayList<>();

  /** What a command printed (stdout and stderr together) and how it exited. */
  private record Result(int code, String output) {}

  private static Path built;
  private static Path tarball;

  @BeforeAll
  static void makeTheDistribution() throws Exception {
    built = Files.createTempDirectory("paddock-dist-built-").toRealPath();
    Result made =
        run(
            List.of(
                "bash",
                CHECKOUT.resolve("deploy/dist.sh").toString(),
                "--output",
                built.toString()),
            CHECKOUT,
            Map.of("HOME", built.toString()));
    assertThat(made.code()).as(made.output()).isZero();
    tarball = Path.of(made.output().strip().lines().reduce((a, b) -> b).orElseThrow());
    assertThat(tarball.getFileName().toString()).matches("paddock-.+\\.tar\\.gz");
  }

  @AfterAll
  static void removeTheDistribution() throws IOException {
    deleteTree(built);
  }

  @BeforeEach
  void unpackTheDistribution() throws Exception {
    cgroupsBefore = sandboxCgroups();
    temp = Files.createTempDirectory("paddock-dist-test-").toRealPath();
    Files.createDirectories(temp.resolve("home"));
    Files.createDirectories(temp.resolve("elsewhere"));
    Path unpacked = Files.createDirectories(temp.resolve("opt"));
    Result untar = cli(temp, "tar", "-xzf", tarball.toString(), "-C", unpacked.toString());
    assertThat(untar.code()).as(untar.output()).isZero();
    try (Stream<Path> dirs = Files.list(unpacked)) {
      launcher = dirs.findFirst().orElseThrow().resolve("bin/paddock");
    }
  }

  @AfterEach
  void stopAndCheckNothingLeaked() throws Exception {
    if (server != null && server.isAlive()) {
      server.destroy();
      if (!server.waitFor(20, TimeUnit.SECONDS)) {
        server.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    }
    List<ProcessHandle> left = processesUnder(temp);
    left.forEach(ProcessHandle::destroyForcibly);
    List<String> containers = new ArrayList<>();
    for (String sandbox : sandboxes) {
      containers.addAll(containersOf(sandbox));
    }
    for (String container : containers) {
      docker("rm", "-f", container);
    }
    deleteTree(temp);
    assertThat(left).as("processes of the distribution left behind").isEmpty();
    assertThat(containers).as("containers left behind").isEmpty();
    Set<Path> cgroups = sandboxCgroups();
    cgroups.removeAll(cgroupsBefore);
    assertThat(cgroups).as("cgroups left behind").isEmpty();
  }

  @Test
  void unpackedDistributionRunsASandboxWithNoCheckout() throws Exception {
    Path agentJar = launcher.getParent().getParent().resolve("lib/paddock-agent-server-all.jar");
    String sandbox = createAndRun(Map.of());
    assertThat(commandLines())
        .as("the sandbox's agent runs from the distribution, not from the checkout")
        .anySatisfy(line -> assertThat(line).contains(agentJar.toString()))
        .noneSatisfy(line -> assertThat(line).contains(CHECKOUT + "/paddock-agent-server"));
    delete(sandbox);
    Awaitility.await("the sandbox's agent is gone")
        .atMost(Duration.ofSeconds(20))
        .until(() -> commandLines().stream().noneMatch(line -> line.contains(agentJar.toString())));
  }

  /**
   * The Docker backend finds the agent in the distribution as well: the runtime bundle it mounts is
   * built from {@code lib/} (on the Docker suites' image; skipped without an engine, failed on CI).
   */
  @Test
  void unpackedDistributionRunsADockerSandbox() throws Exception {
    assumeDocker();
    String image =
        Optional.ofNullable(System.getenv("PADDOCK_TEST_DOCKER_IMAGE"))
            .orElse("paddock/sandbox:bookworm");
    String sandbox =
        createAndRun(
            Map.of(
                "RUNTIME", "docker",
                "docker.image", image,
                "docker.pull", "never",
                "docker.network", "host")); // loopback only
    assertThat(containersOf(sandbox)).as("the sandbox is a container").hasSize(1);
    delete(sandbox);
    assertThat(containersOf(sandbox)).as("its container is removed").isEmpty();
  }

  /** Starts the server with {@code settings}, creates a sandbox, runs a command in it. */
  private String createAndRun(Map<String, String> settings) throws Exception {
    assertThat(launcher.getParent().getParent().resolve("pom.xml")).doesNotExist();
    startServer(settings);

    Result created = cli("sandbox", "create", "--json");
    assertThat(created.code()).as(created.output()).isZero();
    Matcher id = SANDBOX_ID.matcher(created.output());
    assertThat(id.find()).as(created.output()).isTrue();
    String sandbox = id.group(1);
    sandboxes.add(sandbox);

    Result exec = cli("exec", sandbox, "--", "echo from-the-distribution; exit 3");
    assertThat(exec.code()).as(exec.output()).isEqualTo(3);
    assertThat(exec.output()).contains("from-the-distribution");
    return sandbox;
  }

  private void delete(String sandbox) throws Exception {
    Result deleted = cli("sandbox", "delete", sandbox);
    assertThat(deleted.code()).as(deleted.output()).isZero();
    Result listed = cli("sandbox", "list", "--json");
    assertThat(listed.code()).as(listed.output()).isZero();
    assertThat(listed.output()).doesNotContain(sandbox);
  }

  private static void assumeDocker() throws Exception {
    boolean up;
    try {
      up = docker("info").code() == 0;
    } catch (IOException e) {
      up = false; // no docker CLI
    }
    if (!up && "true".equalsIgnoreCase(System.getenv("PADDOCK_TEST_REQUIRE_DOCKER"))) {
      throw new AssertionError("no Docker Engine answers (PADDOCK_TEST_REQUIRE_DOCKER=true)");
    }
    Assumptions.assumeTrue(up, "no Docker Engine answers `docker info`");
  }

  private static List<String> containersOf(String sandbox) throws Exception {
    try {
      Result ps = docker("ps", "-aq", "--filter", "label=paddock.sandbox-id=" + sandbox);
      return ps.output().lines().filter(line -> !line.isBlank()).toList();
    } catch (IOException e) {
      return List.of(); // no docker CLI: no containers either
    }
  }

  private static Result docker(String... args) throws Exception {
    List<String> argv = new ArrayList<>(List.of("docker"));
    argv.addAll(List.of(args));
    Process process = new ProcessBuilder(argv).redirectErrorStream(true).start();
    process.getOutputStream().close();
    String output = readAll(process);
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    return new Result(process.exitValue(), output);
  }

  @Test
  void checkoutCommandsRefuseToRunInADistribution() throws Exception {
    Result build = cli("build");
    assertThat(build.code()).isEqualTo(2);
    assertThat(build.output()).contains("'build' needs a source checkout");
  }

  /** {@code bin/paddock server} on a free port with {@code settings}; returns once it listens. */
  private void startServer(Map<String, String> settings) throws IOException {
    ProcessBuilder builder =
        new ProcessBuilder(launcher.toString(), "server", "--port", "0")
            .directory(temp.resolve("elsewhere").toFile())
            .redirectErrorStream(true);
    environment(builder.environment());
    builder.environment().putAll(settings);
    server = builder.start();
    BufferedReader lines =
        new BufferedReader(new InputStreamReader(server.getInputStream(), StandardCharsets.UTF_8));
    StringBuilder seen = new StringBuilder();
    for (String line; (line = lines.readLine()) != null; ) {
      seen.append(line).append('\n');
      if (LISTENING.matcher(line).find()) {
        Thread.ofVirtual().start(() -> lines.lines().forEach(l -> {}));
        return;
      }
    }
    throw new IllegalStateException("the distribution's server exited:\n" + seen);
  }

  private Result cli(String... args) throws Exception {
    List<String> argv = new ArrayList<>(List.of(launcher.toString()));
    argv.addAll(List.of(args));
    return cli(temp.resolve("elsewhere"), argv.toArray(String[]::new));
  }

  /** {@code argv} in {@code directory}, with only what a user of the distribution would have. */
  private Result cli(Path directory, String... argv) throws Exception {
    Map<String, String> env = new HashMap<>(System.getenv());
    environment(env);
    return run(List.of(argv), directory, env);
  }

  private static Result run(List<String> argv, Path directory, Map<String, String> env)
      throws Exception {
    ProcessBuilder builder =
        new ProcessBuilder(argv).directory(directory.toFile()).redirectErrorStream(true);
    builder.environment().putAll(env);
    Process process = builder.start();
    process.getOutputStream().close();
    CompletableFuture<String> output = CompletableFuture.supplyAsync(() -> readAll(process));
    if (!process.waitFor(COMMAND_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor();
      throw new AssertionError(
          argv + " did not finish in " + COMMAND_TIMEOUT + ":\n" + output.get());
    }
    return new Result(process.exitValue(), output.get());
  }

  private static String readAll(Process process) {
    try {
      return new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * Only what a user of the distribution would have: a PATH, a JDK, a HOME of their own; no setting
   * inherited from the build (a {@code PADDOCK_AGENT_JAR} there would hide a distribution that
   * cannot find its agent).
   */
  private void environment(Map<String, String> env) {
    env.keySet()
        .removeIf(
            name ->
                name.startsWith("PADDOCK_")
                    || name.startsWith("RUNTIME")
                    || name.startsWith("MAVEN")
                    || name.contains("."));
    env.put("JAVA_HOME", System.getProperty("java.home"));
    env.put("HOME", temp.resolve("home").toString());
    env.put("PADDOCK_DATA_DIR", temp.resolve("data").toString());
    env.put("PADDOCK_ADMIN_KEY", ADMIN_KEY);
    env.put(
        "PADDOCK_API_KEY",
        ADMIN_KEY); // the CLI's key: a given admin key is not written to admin.key
  }

  /** The command lines of every live process, as text. */
  private static List<String> commandLines() {
    return ProcessHandle.allProcesses()
        .map(DistributionTest::commandLine)
        .filter(line -> !line.isEmpty())
        .toList();
  }

  private static String commandLine(ProcessHandle process) {
    try {
      return Files.readString(Path.of("/proc", Long.toString(process.pid()), "cmdline"))
          .replace('\0', ' ');
    } catch (IOException e) {
      return ""; // gone meanwhile, or not ours to read
    }
  }

  private static List<ProcessHandle> processesUnder(Path dir) {
    return ProcessHandle.allProcesses()
        .filter(p -> commandLine(p).contains(dir.toString()))
        .toList();
  }

  private static Set<Path> sandboxCgroups() throws IOException {
    Set<Path> found = new HashSet<>();
    for (Path root : CgroupRoots.all()) {
      if (Files.isDirectory(root)) {
        try (Stream<Path> dirs = Files.list(root)) {
          dirs.filter(d -> d.getFileName().toString().startsWith("sb-")).forEach(found::add);
        }
      }
    }
    return found;
  }

  private static void deleteTree(Path dir) throws IOException {
    if (dir == null || !Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
