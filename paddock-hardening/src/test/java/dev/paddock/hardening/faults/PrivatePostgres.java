package dev.paddock.hardening.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.controlplane.FileTrees;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A PostgreSQL cluster of the test's own, which it can stop and start: Debian's server binaries
 * ({@code /usr/lib/postgresql/<version>/bin}; skipped without them), {@code initdb} into a
 * temporary directory and {@code pg_ctl} on a free loopback port, run as the {@code postgres} user
 * when the test runs as root (PostgreSQL refuses root). Not the shared server the store tests use:
 * stopping this one breaks nothing else. After each test it is stopped (also when the test failed)
 * and its directory removed, and the test fails if a server process of it is left. Register it
 * before the control plane (a lower {@code @Order}), so the control plane's clean-up still finds it
 * running.
 */
final class PrivatePostgres implements BeforeEachCallback, AfterEachCallback {
  static final String USER = "paddock_faults";
  static final String PASSWORD = "paddock-faults-password";

  private Path bin;
  private Path dir;
  private int port;
  private boolean running;

  @Override
  public void beforeEach(ExtensionContext context) throws Exception {
    bin = serverBinaries();
    dir = Files.createTempDirectory("paddock-faults-pg-");
    if (asRoot()) {
      UserPrincipalLookupService users = dir.getFileSystem().getUserPrincipalLookupService();
      Files.setOwner(dir, users.lookupPrincipalByName("postgres"));
    }
    Path passwordFile = dir.resolve("password");
    Files.writeString(passwordFile, PASSWORD + "\n");
    if (asRoot()) {
      Files.setOwner(
          passwordFile,
          dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("postgres"));
    }
    run(
        "initdb",
        "-D",
        data(),
        "-U",
        USER,
        "--pwfile=" + passwordFile,
        "-A",
        "scram-sha-256",
        "-E",
        "UTF8",
        "--locale=C",
        "--no-sync");
    port = freePort();
    start();
  }

  @Override
  public void afterEach(ExtensionContext context) throws Exception {
    if (dir == null) {
      return;
    }
    try {
      if (running) {
        stop();
      }
    } finally {
      FileTrees.delete(dir);
    }
    assertThat(serverProcesses()).as("PostgreSQL processes of %s left", dir).isEmpty();
    assertThat(dir).doesNotExist();
  }

  /** The JDBC URL of its {@code postgres} database, owned by {@link #USER}. */
  String url() {
    return "jdbc:postgresql://127.0.0.1:" + port + "/postgres";
  }

  int port() {
    return port;
  }

  /** Starts the server and returns once it accepts connections. */
  void start() throws Exception {
    running = true; // before: a start that timed out may still have left a postmaster to stop
    run(
        "pg_ctl",
        "-D",
        data(),
        "-l",
        dir.resolve("server.log").toString(),
        "-w",
        "-t",
        "30",
        "-o",
        "-p " + port + " -k " + dir + " -c listen_addresses=127.0.0.1 -c fsync=off",
        "start");
  }

  /**
   * Stops it as an operator would ({@code pg_ctl stop -m fast}: open sessions are ended, then the
   * server exits) and returns once it is gone.
   */
  void stop() throws Exception {
    run("pg_ctl", "-D", data(), "-m", "fast", "-w", "-t", "30", "stop");
    running = false;
  }

  private String data() {
    return dir.resolve("data").toString();
  }

  private void run(String tool, String... args) throws Exception {
    List<String> command = new ArrayList<>();
    if (asRoot()) {
      command.addAll(List.of("runuser", "-u", "postgres", "--"));
    }
    command.add(bin.resolve(tool).toString());
    command.addAll(List.of(args));
    Process process =
        new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).start();
    process.getOutputStream().close();
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).as("%s did not end", tool).isTrue();
    assertThat(process.exitValue()).as("%s %s: %s", tool, args, out).isZero();
  }

  /** Live processes whose command line names this cluster's directory. */
  private List<Long> serverProcesses() {
    return ProcessHandle.allProcesses()
        .filter(p -> commandLine(p).contains(dir.toString()))
        .map(ProcessHandle::pid)
        .toList();
  }

  private static String commandLine(ProcessHandle process) {
    try {
      return Files.readString(Path.of("/proc/" + process.pid() + "/cmdline"));
    } catch (IOException | java.io.UncheckedIOException e) {
      return ""; // gone meanwhile, or not ours to read
    }
  }

  private static Path serverBinaries() throws IOException {
    Path root = Path.of("/usr/lib/postgresql");
    Assumptions.assumeTrue(
        Files.isDirectory(root), "no PostgreSQL server binaries under /usr/lib/postgresql");
    try (var versions = Files.list(root)) {
      Path found =
          versions
              .map(v -> v.resolve("bin"))
              .filter(b -> Files.isExecutable(b.resolve("pg_ctl")))
              .max(Comparator.comparing(Path::toString))
              .orElse(null);
      Assumptions.assumeTrue(found != null, "no pg_ctl under /usr/lib/postgresql/*/bin");
      return found;
    }
  }

  private static boolean asRoot() {
    return "root".equals(System.getProperty("user.name"));
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }
}
