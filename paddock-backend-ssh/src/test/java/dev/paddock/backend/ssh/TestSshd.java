package dev.paddock.backend.ssh;

import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A real OpenSSH server for one test class: Debian's {@code /usr/sbin/sshd} run in the foreground
 * ({@code -D -e}) on a free loopback port with its own host key, its own {@code authorized_keys}
 * holding a client key made here, and nothing else (no passwords, no PAM). Everything lives in one
 * temporary directory removed by {@link #close}, with the sandboxes' remote directory under it.
 *
 * <p>No sshd: the tests are skipped saying why, unless {@code PADDOCK_TEST_REQUIRE_SSHD=true}
 * ({@code .ci/run} installs openssh-server and sets it), when they fail instead.
 */
final class TestSshd implements AutoCloseable {
  static final Path SSHD = Path.of("/usr/sbin/sshd");

  private final Path dir;
  private final int port;
  private final Process process;

  private TestSshd(Path dir, int port, Process process) {
    this.dir = dir;
    this.port = port;
    this.process = process;
  }

  /**
   * The hosts' runtime bundles, shared by every test class's server in one build: copying the
   * bundle (tens of MB, packed and unpacked) takes seconds, and only {@link #startWithEmptyHost}
   * classes test the copy itself.
   */
  private static final Path SHARED_BUNDLES =
      Path.of("target", "ssh-test-host-bundles").toAbsolutePath();

  /**
   * A running server whose host already has the runtime bundles earlier classes copied to it, or
   * the test is skipped (failed on CI) with the reason.
   */
  static TestSshd start() {
    TestSshd sshd = startWithEmptyHost();
    try {
      Files.createDirectories(SHARED_BUNDLES);
      Files.createDirectories(sshd.remoteDir());
      Files.createSymbolicLink(sshd.remoteDir().resolve("bundles"), SHARED_BUNDLES);
    } catch (IOException e) {
      sshd.close();
      throw new UncheckedIOException(e);
    }
    return sshd;
  }

  /** A running server on a host with nothing on it yet, or the test is skipped (failed on CI). */
  static TestSshd startWithEmptyHost() {
    boolean required = "true".equalsIgnoreCase(System.getenv("PADDOCK_TEST_REQUIRE_SSHD"));
    if (!Files.isExecutable(SSHD) || !Files.isExecutable(Path.of("/usr/bin/ssh"))) {
      String problem = "no OpenSSH server/client (apt-get install openssh-server openssh-client)";
      if (required) {
        fail(problem + " (PADDOCK_TEST_REQUIRE_SSHD=true)");
      }
      assumeTrue(false, problem);
    }
    try {
      Path dir = Files.createTempDirectory("paddock-sshd-");
      keygen(dir.resolve("host_key"));
      keygen(dir.resolve("client_key"));
      keygen(dir.resolve("other_key"));
      Files.copy(dir.resolve("client_key.pub"), dir.resolve("authorized_keys"));
      Files.setPosixFilePermissions(
          dir.resolve("authorized_keys"), PosixFilePermissions.fromString("rw-------"));
      // sshd insists on its privilege-separation directory even in the foreground.
      Files.createDirectories(Path.of("/run/sshd"));
      for (int attempt = 0; ; attempt++) {
        int port = freePort();
        Files.writeString(dir.resolve("sshd_config"), config(dir, port));
        Process sshd =
            new ProcessBuilder(
                    SSHD.toString(), "-D", "-e", "-f", dir.resolve("sshd_config").toString())
                .redirectErrorStream(true)
                .start();
        if (listening(sshd)) {
          TestSshd server = new TestSshd(dir, port, sshd);
          server.writeKnownHosts(server.knownHosts(), dir.resolve("host_key.pub"));
          server.writeKnownHosts(server.wrongKnownHosts(), dir.resolve("other_key.pub"));
          return server;
        }
        sshd.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
        if (attempt == 3) {
          deleteTree(dir);
          throw new IllegalStateException("sshd did not start; see its output above");
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  int port() {
    return port;
  }

  String target() {
    return System.getProperty("user.name") + "@127.0.0.1:" + port;
  }

  Path clientKey() {
    return dir.resolve("client_key");
  }

  /** A key sshd does not accept. */
  Path otherKey() {
    return dir.resolve("other_key");
  }

  Path knownHosts() {
    return dir.resolve("known_hosts");
  }

  /** A known_hosts naming this server with another key. */
  Path wrongKnownHosts() {
    return dir.resolve("wrong_known_hosts");
  }

  /** The hosts' sandbox directory (absolute, so the login's home stays untouched). */
  Path remoteDir() {
    return dir.resolve("remote");
  }

  /** Settings of a backend on this server; {@code overrides} replace any of them. */
  Map<String, String> settings(Map<String, String> overrides) {
    Map<String, String> settings = new HashMap<>();
    settings.put("ssh.hosts", target());
    settings.put("ssh.key-file", clientKey().toString());
    settings.put("ssh.known-hosts", knownHosts().toString());
    settings.put("ssh.remote-dir", remoteDir().toString());
    // Generous: under a loaded CI machine sshd can take seconds to answer; no test waits it out.
    settings.put("ssh.connect-timeout", "20s");
    settings.put("ssh.stop-grace", "3s");
    settings.put("paddock.home", Path.of("..").toAbsolutePath().normalize().toString());
    // The runtime bundle is built once per build, not once per test class.
    settings.put(
        "paddock.data-dir", Path.of("target", "ssh-test-data").toAbsolutePath().toString());
    settings.putAll(overrides);
    return settings;
  }

  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
      deleteTree(dir);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void deleteTree(Path dir) throws IOException {
    try (var paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  private void writeKnownHosts(Path file, Path publicKey) throws IOException {
    String[] key = Files.readString(publicKey).strip().split(" ");
    Files.writeString(file, "[127.0.0.1]:" + port + " " + key[0] + " " + key[1] + "\n");
  }

  private static String config(Path dir, int port) {
    return String.join(
        "\n",
        "Port " + port,
        "ListenAddress 127.0.0.1",
        "HostKey " + dir.resolve("host_key"),
        "AuthorizedKeysFile " + dir.resolve("authorized_keys"),
        "PidFile none",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "PubkeyAuthentication yes",
        "PermitRootLogin prohibit-password",
        "UsePAM no",
        "StrictModes no",
        "AllowTcpForwarding local",
        "AllowAgentForwarding no",
        "X11Forwarding no",
        "PermitTTY no",
        "MaxSessions 200",
        "MaxStartups 100:30:200",
        // Debian's bash sources the login's ~/.bashrc for every command sshd runs, and this
        // machine's root runs pyenv init there: 200-300 ms per backend call, most of this suite's
        // time. A sandbox host's dedicated account has no such rc; SHLVL=1 makes bash skip it
        // (its "run by sshd" test needs a first-level shell), which is what such a host does.
        "SetEnv SHLVL=1",
        // INFO (the default): its "Server listening on" line is how start() knows it is bound.
        "LogLevel INFO",
        "");
  }

  /** Waits for sshd's "Server listening on" line (it prints it once bound), or its exit. */
  private static boolean listening(Process sshd) throws InterruptedException {
    CompletableFuture<Boolean> listening = new CompletableFuture<>();
    Thread.ofVirtual()
        .start(
            () -> {
              try (var lines =
                  new BufferedReader(
                      new InputStreamReader(sshd.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = lines.readLine()) != null; ) {
                  if (line.contains("Server listening on")) {
                    listening.complete(true);
                  } else if (!listening.isDone()) {
                    System.err.println("sshd: " + line);
                  }
                }
              } catch (IOException e) {
                // sshd exited: the future says whether it ever listened.
              }
              listening.complete(false);
            });
    try {
      return listening.get(20, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
      return false;
    }
  }

  private static void keygen(Path file) throws IOException, InterruptedException {
    Process p =
        new ProcessBuilder("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", file.toString())
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
    if (p.waitFor() != 0) {
      throw new IOException("ssh-keygen failed for " + file);
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket()) {
      socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      return socket.getLocalPort();
    }
  }
}
