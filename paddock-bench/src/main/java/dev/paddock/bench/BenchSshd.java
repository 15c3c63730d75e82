package dev.paddock.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A local OpenSSH server for {@link SshBench}: {@code /usr/sbin/sshd -D -e} on a free loopback port
 * with its own ECDSA host key and one ECDSA client key (a type both OpenSSH and Apache MINA SSHD
 * read without extra providers), public-key log-in only, stopped by {@link #close}.
 */
final class BenchSshd implements AutoCloseable {
  private final Path dir;
  private final int port;
  private final Process process;

  private BenchSshd(Path dir, int port, Process process) {
    this.dir = dir;
    this.port = port;
    this.process = process;
  }

  static BenchSshd start(Path dir) throws IOException, InterruptedException {
    keygen(dir.resolve("host_key"));
    keygen(dir.resolve("client_key"));
    Files.copy(dir.resolve("client_key.pub"), dir.resolve("authorized_keys"));
    Files.createDirectories(Path.of("/run/sshd"));
    int port = freePort();
    Files.writeString(dir.resolve("sshd_config"), config(dir, port));
    Process sshd =
        new ProcessBuilder(
                "/usr/sbin/sshd", "-D", "-e", "-f", dir.resolve("sshd_config").toString())
            .redirectErrorStream(true)
            .start();
    if (!listening(sshd)) {
      sshd.destroyForcibly();
      throw new IllegalStateException("sshd did not start on port " + port);
    }
    String[] hostKey = Files.readString(dir.resolve("host_key.pub")).strip().split(" ");
    Files.writeString(
        dir.resolve("known_hosts"),
        "[127.0.0.1]:" + port + " " + hostKey[0] + " " + hostKey[1] + "\n");
    return new BenchSshd(dir, port, sshd);
  }

  int port() {
    return port;
  }

  String user() {
    return System.getProperty("user.name");
  }

  String target() {
    return user() + "@127.0.0.1:" + port;
  }

  Path clientKey() {
    return dir.resolve("client_key");
  }

  Path knownHosts() {
    return dir.resolve("known_hosts");
  }

  Path remoteDir() {
    return dir.resolve("remote");
  }

  /** The OpenSSH client options of the backend (strict, this key only), plus {@code extra}. */
  List<String> ssh(String... extra) {
    List<String> argv =
        new java.util.ArrayList<>(
            List.of(
                "ssh",
                "-F",
                "/dev/null",
                "-i",
                clientKey().toString(),
                "-o",
                "IdentitiesOnly=yes",
                "-o",
                "BatchMode=yes",
                "-o",
                "StrictHostKeyChecking=yes",
                "-o",
                "UserKnownHostsFile=" + knownHosts(),
                "-o",
                "GlobalKnownHostsFile=/dev/null",
                "-p",
                Integer.toString(port),
                "-l",
                user()));
    argv.addAll(List.of(extra));
    return argv;
  }

  @Override
  public void close() {
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      process.destroyForcibly();
    }
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
        "PermitRootLogin prohibit-password",
        "UsePAM no",
        "StrictModes no",
        "AllowTcpForwarding local",
        "X11Forwarding no",
        "PermitTTY no",
        "MaxSessions 200",
        "MaxStartups 100:30:200",
        // As the tests' sshd (TestSshd): bash skips the login's ~/.bashrc, which on a build
        // machine may run pyenv or nvm on every call; a sandbox host's account has no such rc.
        "SetEnv SHLVL=1",
        "");
  }

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
                  }
                }
              } catch (IOException e) {
                // sshd exited: whether it ever listened is already decided.
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
        new ProcessBuilder(
                "ssh-keygen",
                "-q",
                "-t",
                "ecdsa",
                "-b",
                "256",
                "-m",
                "PEM",
                "-N",
                "",
                "-f",
                file.toString())
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
