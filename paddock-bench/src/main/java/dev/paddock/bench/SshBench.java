package dev.paddock.bench;

import dev.paddock.api.ExposedUrl;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.spi.RuntimeState;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.backend.ssh.SshBackendProvider;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.sshd.client.SshClient;
import org.apache.sshd.client.keyverifier.KnownHostsServerKeyVerifier;
import org.apache.sshd.client.keyverifier.RejectAllServerKeyVerifier;
import org.apache.sshd.client.session.ClientSession;
import org.apache.sshd.common.keyprovider.FileKeyPairProvider;
import org.apache.sshd.common.util.net.SshdSocketAddress;

/**
 * The SSH backend bench, against a local sshd it starts: create → RUNNING and exec {@code true}
 * through the SSH port forward, beside {@code ssh host true} and a direct call of the same agent;
 * and the client choice (docs/REMOTE.md): a command round trip and a forwarded HTTP call with the
 * OpenSSH client (ControlMaster) and with Apache MINA SSHD, same run, same server.
 *
 * <pre>
 * java -cp paddock-bench/target/benchmarks.jar dev.paddock.bench.SshBench [--quick] [--json FILE]
 * </pre>
 *
 * Needs {@code /usr/sbin/sshd} (Debian's openssh-server) and root or a login the server accepts;
 * all traffic is on loopback. Every sandbox and process it starts is removed on exit.
 */
public final class SshBench {
  private static final Duration TIMEOUT = Duration.ofSeconds(30);

  private SshBench() {}

  public static void main(String[] args) throws Exception {
    BenchOptions options =
        BenchOptions.parseOrExit(args, "SshBench [--quick] [--json FILE]", false);
    Cleanup.around(cleanup -> run(options, cleanup));
  }

  private static void run(BenchOptions options, Cleanup cleanup) throws Exception {
    Checkout checkout = Checkout.find();
    BenchSshd sshd = cleanup.register(BenchSshd.start(cleanup.tempDir("paddock-bench-sshd-")));
    String run = "bench-" + HexFormat.of().formatHex(SecureRandom.getSeed(4));
    int starts = options.quick() ? 3 : 15;
    int calls = options.quick() ? 50 : 300;
    int trips = options.quick() ? 10 : 50;
    System.out.println("paddock ssh bench" + (options.quick() ? " (--quick: smoke run)" : ""));
    SandboxBackend backend =
        cleanup.register(new SshBackendProvider().create(settings(checkout, sshd)));
    BenchSandboxes sandboxes =
        new BenchSandboxes(backend, SandboxSpec.builder("ssh-default").build(), run, cleanup);
    Report report = new Report(context(sshd, options.quick()));

    // The first start builds the bundle (once per build) and copies it to the host (once per host).
    sandboxes.destroy(sandboxes.start(0));
    Samples create = new Samples(starts);
    for (int i = 1; i <= starts; i++) {
      long t0 = System.nanoTime();
      BenchSandboxes.Sandbox s = sandboxes.start(i);
      requireAlive(localPort(backend, s), s.key());
      create.add(System.nanoTime() - t0);
      sandboxes.destroy(s);
    }
    Samples sshTrue = sshTrue(sshd, trips);
    report.add(
        Figure.info(
            "create → RUNNING, /alive 200 through the forward p50",
            "ms",
            create.percentileMillis(50),
            sshTrue.percentileMillis(50),
            "ssh host true p50 (new connection)"));
    report.add(
        Figure.info(
            "create → RUNNING p95",
            "ms",
            create.percentileMillis(95),
            sshTrue.percentileMillis(95),
            "ssh host true p95"));

    BenchSandboxes.Sandbox s = sandboxes.start(starts + 1);
    int forwarded = localPort(backend, s);
    Samples throughForward = execTrue(forwarded, s.key(), calls);
    Samples direct = execTrue(s.port(), s.key(), calls);
    report.add(
        Figure.info(
            "exec true through the OpenSSH forward p50",
            "ms",
            throughForward.percentileMillis(50),
            direct.percentileMillis(50),
            "direct agent call p50"));
    report.add(
        Figure.info(
            "exec true through the OpenSSH forward p95",
            "ms",
            throughForward.percentileMillis(95),
            direct.percentileMillis(95),
            "direct agent call p95"));

    Samples mux = openSshMuxTrips(sshd, trips, cleanup);
    try (SshClient client = SshClient.setUpDefaultClient()) {
      client.setServerKeyVerifier(
          new KnownHostsServerKeyVerifier(RejectAllServerKeyVerifier.INSTANCE, sshd.knownHosts()));
      client.setKeyIdentityProvider(new FileKeyPairProvider(sshd.clientKey()));
      client.start();
      try (ClientSession session =
          client.connect(sshd.user(), "127.0.0.1", sshd.port()).verify(TIMEOUT).getSession()) {
        session.auth().verify(TIMEOUT);
        Samples mina = minaTrips(session, trips);
        report.add(
            Figure.info(
                "command round trip, OpenSSH ControlMaster (ssh -S … true) p50",
                "ms",
                mux.percentileMillis(50),
                mina.percentileMillis(50),
                "MINA SSHD exec channel p50"));
        var tracker =
            session.createLocalPortForwardingTracker(
                new SshdSocketAddress("127.0.0.1", 0),
                new SshdSocketAddress("127.0.0.1", s.port()));
        Samples minaForward = execTrue(tracker.getBoundAddress().getPort(), s.key(), calls);
        report.add(
            Figure.info(
                "exec true through the OpenSSH forward p50 (again)",
                "ms",
                execTrue(forwarded, s.key(), calls).percentileMillis(50),
                minaForward.percentileMillis(50),
                "through a MINA SSHD forward p50"));
        tracker.close();
      }
    }
    sandboxes.destroy(s);
    if (!sandboxes.left().isEmpty()) {
      throw new IllegalStateException("sandboxes left: " + sandboxes.left());
    }
    System.out.println();
    report.print(System.out);
    if (options.json().isPresent()) {
      report.writeJson(options.json().get());
    }
  }

  private static Map<String, String> settings(Checkout checkout, BenchSshd sshd) {
    Map<String, String> settings = new LinkedHashMap<>();
    settings.put("ssh.hosts", sshd.target());
    settings.put("ssh.key-file", sshd.clientKey().toString());
    settings.put("ssh.known-hosts", sshd.knownHosts().toString());
    settings.put("ssh.remote-dir", sshd.remoteDir().toString());
    settings.put("paddock.home", checkout.root().toString());
    settings.put(
        "paddock.data-dir", checkout.root().resolve("paddock-bench/target/ssh-bench").toString());
    return settings;
  }

  private static Map<String, String> context(BenchSshd sshd, boolean quick) {
    Map<String, String> context = new LinkedHashMap<>();
    context.put("java", Runtime.version().toString());
    context.put("cores", Integer.toString(Runtime.getRuntime().availableProcessors()));
    context.put("sshd", "OpenSSH /usr/sbin/sshd on 127.0.0.1:" + sshd.port());
    context.put("run", quick ? "quick" : "full");
    return context;
  }

  private static int localPort(SandboxBackend backend, BenchSandboxes.Sandbox s) {
    RuntimeState state = backend.inspect(s.handle());
    String url =
        state.urls().stream()
            .filter(u -> u.name().equals(ExposedUrl.AGENT_SERVER))
            .findFirst()
            .orElseThrow(() -> new IllegalStateException("not running: " + state))
            .url();
    return URI.create(url).getPort();
  }

  private static void requireAlive(int port, String key) throws IOException {
    try (HttpConnection c = HttpConnection.open(port, key)) {
      AgentCalls.get(c, "/alive");
    }
  }

  /** {@code true} through the agent on one keep-alive connection, after a tenth as warm-up. */
  private static Samples execTrue(int port, String key, int calls) throws IOException {
    byte[] body = AgentCalls.commandBody("true", null);
    Samples samples = new Samples(calls);
    try (HttpConnection c = HttpConnection.open(port, key)) {
      for (int i = 0; i < calls / 10; i++) {
        AgentCalls.executeChecked(c, body);
      }
      for (int i = 0; i < calls; i++) {
        long t0 = System.nanoTime();
        AgentCalls.executeChecked(c, body);
        samples.add(System.nanoTime() - t0);
      }
    }
    return samples;
  }

  /** {@code ssh host true}, each a new connection (key exchange and log-in included). */
  private static Samples sshTrue(BenchSshd sshd, int trips) throws Exception {
    Samples samples = new Samples(trips);
    for (int i = 0; i <= trips; i++) {
      long t =
          timed(sshd.ssh("-o", "ControlMaster=no", "-o", "ControlPath=none", "127.0.0.1", "true"));
      if (i > 0) {
        samples.add(t);
      }
    }
    return samples;
  }

  /** {@code ssh -S <socket> host true} over a master connection, as the backend runs commands. */
  private static Samples openSshMuxTrips(BenchSshd sshd, int trips, Cleanup cleanup)
      throws Exception {
    Path socket = cleanup.tempDir("paddock-bench-mux-").resolve("m");
    Process master =
        new ProcessBuilder(sshd.ssh("-M", "-N", "-S", socket.toString(), "127.0.0.1"))
            .redirectErrorStream(true)
            .start();
    cleanup.register(master::destroyForcibly);
    while (timedExit(sshd.ssh("-S", socket.toString(), "-O", "check", "127.0.0.1")) != 0) {
      if (!master.isAlive()) {
        throw new IllegalStateException("the ssh master exited");
      }
      TimeUnit.MILLISECONDS.sleep(10); // a bench's own set-up, not a measurement
    }
    Samples samples = new Samples(trips);
    for (int i = 0; i <= trips; i++) {
      long t =
          timed(sshd.ssh("-S", socket.toString(), "-o", "ControlMaster=no", "127.0.0.1", "true"));
      if (i > 0) {
        samples.add(t);
      }
    }
    master.destroy();
    return samples;
  }

  /** An exec channel running {@code true} on an open MINA session, per trip. */
  private static Samples minaTrips(ClientSession session, int trips) throws IOException {
    Samples samples = new Samples(trips);
    for (int i = 0; i <= trips; i++) {
      long t0 = System.nanoTime();
      session.executeRemoteCommand("true");
      if (i > 0) {
        samples.add(System.nanoTime() - t0);
      }
    }
    return samples;
  }

  private static long timed(List<String> argv) throws Exception {
    long t0 = System.nanoTime();
    int code = timedExit(argv);
    if (code != 0) {
      throw new IllegalStateException(String.join(" ", argv) + " exited " + code);
    }
    return System.nanoTime() - t0;
  }

  private static int timedExit(List<String> argv) throws Exception {
    Process p =
        new ProcessBuilder(argv)
            .redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.DISCARD)
            .start();
    if (!p.waitFor(30, TimeUnit.SECONDS)) {
      p.destroyForcibly();
      throw new IllegalStateException(String.join(" ", argv) + " hung");
    }
    return p.exitValue();
  }
}
