package dev.paddock.backend.ssh;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * One sandbox host: its connection, and the one-time work per connection before it takes sandboxes:
 * a probe (bash, glibc, setsid, free disk, and whether the host has the agent's runtime bundle),
 * then the bundle, copied only when the host does not have that content key yet. Thread-safe:
 * preparation is guarded by {@code this}.
 */
final class SshHost implements AutoCloseable {
  private static final System.Logger LOG = System.getLogger("paddock.backend.ssh");
  private static final Duration COPY_TIMEOUT = Duration.ofMinutes(10);

  private final SshConnection connection;
  private final SshSettings settings;

  /** Guarded by {@code this}: the connection generation the host was last prepared for. */
  private long prepared = -1;

  SshHost(SshConnection connection, SshSettings settings) {
    this.connection = connection;
    this.settings = settings;
  }

  SshConnection connection() {
    return connection;
  }

  SshTarget target() {
    return connection.target();
  }

  /**
   * Connects, checks the host can run the agent and puts {@code bundle} on it (each once per
   * connection).
   *
   * @throws SshHostException classified
   */
  synchronized void prepare(AgentBundle bundle) {
    long generation = connection.connect();
    if (prepared == generation) {
      return;
    }
    // One call checks the host and whether it has the bundle: each call is a channel, a login
    // shell and the script, hundreds of milliseconds on a loaded host.
    if (!probe(bundle).equals("present")) {
      copy(bundle);
    }
    prepared = generation;
  }

  /** Runs a host-script operation and returns its result (a script failure is not thrown). */
  SshResult run(String operation, String... args) {
    return runWithInput(new byte[0], Duration.ofSeconds(60), operation, args);
  }

  SshResult runWithInput(byte[] stdin, Duration timeout, String operation, String... args) {
    SshResult result =
        connection.run(HostScript.command(settings.remoteDir(), operation, args), stdin, timeout);
    if (result.exitCode() == 127 && result.stderr().contains("bash")) {
      throw new SshHostException(
          SshFailure.HOST_UNSUITABLE, target(), "no bash: " + result.stderr().strip(), null);
    }
    return result;
  }

  /** Checks the host can run the agent; whether it has {@code bundle} ({@code present}). */
  private String probe(AgentBundle bundle) {
    SshResult result = run("probe", bundle.key());
    if (!result.ok()) {
      throw scriptFailure(result);
    }
    Map<String, String> facts = HostScript.keyValues(result.stdout());
    long freeKib = Long.parseLong(facts.getOrDefault("free_kib", "0"));
    if (freeKib * 1024 < settings.minFreeDisk()) {
      throw new SshHostException(
          SshFailure.DISK_FULL,
          target(),
          freeKib + " KiB free in " + settings.remoteDir() + ", below ssh.min-free-disk",
          null);
    }
    LOG.log(
        System.Logger.Level.DEBUG,
        "ssh backend: {0} has glibc {1} on {2}, {3} KiB free",
        target(),
        facts.get("glibc"),
        facts.get("arch"),
        freeKib);
    return facts.getOrDefault("bundle", "absent");
  }

  /** {@code tar -cz} of the bundle piped into {@code put-bundle} on the host. */
  private void copy(AgentBundle bundle) {
    long t0 = System.nanoTime();
    try {
      Process tar =
          new ProcessBuilder("tar", "-czf", "-", "-C", bundle.dir().toString(), ".")
              .redirectError(ProcessBuilder.Redirect.DISCARD)
              .start();
      byte[] archive;
      try (var in = tar.getInputStream()) {
        archive = in.readAllBytes();
      }
      if (!tar.waitFor(COPY_TIMEOUT.toSeconds(), TimeUnit.SECONDS) || tar.exitValue() != 0) {
        throw new IllegalStateException("tar of " + bundle.dir() + " failed");
      }
      SshResult result = runWithInput(archive, COPY_TIMEOUT, "put-bundle", bundle.key());
      if (!result.ok()) {
        throw scriptFailure(result);
      }
    } catch (IOException e) {
      throw new IllegalStateException("cannot pack " + bundle.dir() + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while copying the bundle", e);
    }
    LOG.log(
        System.Logger.Level.INFO,
        "ssh backend: copied runtime bundle {0} to {1} in {2} ms",
        bundle.key(),
        target(),
        (System.nanoTime() - t0) / 1_000_000);
  }

  /** The host script's classified failure as an exception. */
  SshHostException scriptFailure(SshResult result) {
    var reported = HostScript.failure(result.stderr());
    String detail = reported.map(Map.Entry::getValue).orElse(result.stderr().strip());
    String kind = reported.map(Map.Entry::getKey).orElse("");
    SshFailure failure =
        switch (kind) {
          case "disk-full" -> SshFailure.DISK_FULL;
          case "unsuitable" -> SshFailure.HOST_UNSUITABLE;
          default ->
              detail.contains("No space left on device")
                  ? SshFailure.DISK_FULL
                  : SshFailure.HOST_UNSUITABLE;
        };
    return new SshHostException(
        failure, target(), "exit " + result.exitCode() + ": " + detail, null);
  }

  /** Stdin lines for {@code start}: {@code secret}, {@code env} and {@code cmd} records. */
  static byte[] startInput(String secrets, Map<String, String> env, List<String> command) {
    StringBuilder text = new StringBuilder();
    for (String line : secrets.split("\n")) {
      if (!line.isBlank()) {
        text.append("secret ").append(line).append('\n');
      }
    }
    var base64 = java.util.Base64.getEncoder();
    env.forEach(
        (name, value) ->
            text.append("env ")
                .append(
                    base64.encodeToString((name + "=" + value).getBytes(StandardCharsets.UTF_8)))
                .append('\n'));
    for (String word : command) {
      text.append("cmd ")
          .append(base64.encodeToString(word.getBytes(StandardCharsets.UTF_8)))
          .append('\n');
    }
    return text.toString().getBytes(StandardCharsets.UTF_8);
  }

  @Override
  public void close() {
    connection.close();
  }
}
