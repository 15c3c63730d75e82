package dev.paddock.hardening.badinput;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.SandboxInfo;
import dev.paddock.cli.ControlPlane;
import dev.paddock.client.PaddockClient;
import dev.paddock.hardening.badinput.Probe.Credential;
import dev.paddock.hardening.badinput.RawHttp.Kind;
import dev.paddock.hardening.badinput.RawHttp.Reply;
import dev.paddock.hardening.badinput.Routes.Operation;
import dev.paddock.http.Json;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Generated bad input at a real control plane (process backend, SQLite, REST API on a loopback port
 * 0) and at the real agent-servers of two sandboxes it started: every documented route of both, in
 * turn, and the HTTP layer itself over raw sockets. The inputs come from one seeded generator
 * ({@link Inputs}); the seed and the count are printed and can be set: {@code
 * -Dpaddock.hardening.seed=N -Dpaddock.hardening.inputs=10000}.
 *
 * <p>Asserted over every input: no answer of 500 or more, none left hanging (answered or closed
 * within 10 s; creates, which start an agent, 90 s), every 4xx a {@code {"detail": ...}} object, no
 * refused credential (revoked, wrong, missing, another user's or another sandbox's) answered with
 * success, no key or canary content in any answer. Afterwards: nothing outside the workspace
 * changed (a canary directory, the sandbox and data directories), both sandboxes still RUNNING and
 * their agents answering with their keys.
 */
class BadInputTest {
  private static final long DEFAULT_SEED = 20_261_201L;
  private static final int DEFAULT_INPUTS = 1_000;
  private static final Duration BOUND = Duration.ofSeconds(10);
  private static final Duration CREATE_BOUND = Duration.ofSeconds(90);
  private static final int CHECK_EVERY = 100;
  private static final String FIXTURE =
      "rm -rf d inside.txt out loop fifo raw.txt && mkdir d && echo in > inside.txt"
          + " && ln -s %s out && ln -s loop loop && mkfifo fifo"
          + " && { [ -d .git ] || git init -q . 2>/dev/null || true; }";

  @RegisterExtension
  final ControlPlane plane =
      new ControlPlane().withBackendSettings(Map.of("process.confine-files", "true"));

  private Path canary;
  private final List<String> findings = new ArrayList<>();
  private final Map<String, Integer> statuses = new TreeMap<>();
  private final Map<String, Integer> hits = new TreeMap<>();
  private long slowest;
  private int sandboxesCreated;

  @AfterEach
  void removeCanary() throws IOException {
    if (canary != null) {
      try (Stream<Path> paths = Files.walk(canary)) {
        for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      }
    }
  }

  @Test
  void noBadInputGetsA5xxHangsLeaksOrHarmsASandbox() throws Exception {
    long seed = Long.getLong("paddock.hardening.seed", DEFAULT_SEED);
    int count = Integer.getInteger("paddock.hardening.inputs", DEFAULT_INPUTS);
    PaddockClient admin = PaddockClient.connect(URI.create(plane.url()), ControlPlane.ADMIN_KEY);
    Sandboxes sandboxes = sandboxes(admin);
    Fixture f = sandboxes.fixture();
    List<Operation> cpRoutes = Routes.of("dev/paddock/server/openapi.json");
    List<Operation> agentRoutes = Routes.of("dev/paddock/agent/openapi.json");
    System.out.printf(
        "bad input: seed %d, %d inputs, %d control-plane and %d agent routes%n",
        seed, count, cpRoutes.size(), agentRoutes.size());

    Outside outside = outside(f);
    List<CompletableFuture<Reply>> held = holdUnfinishedRequests(f);
    long started = System.nanoTime();

    Inputs inputs = new Inputs(seed, f, cpRoutes, agentRoutes);
    for (int i = 0; i < count; i++) {
      Probe probe = inputs.next();
      boolean create = probe.summary().equals("POST /api/v1/sandboxes");
      Reply reply =
          RawHttp.exchange(
              probe.port(), probe.bytes(), probe.halfClose(), create ? CREATE_BOUND : BOUND);
      record(probe, reply);
      check(i, probe, reply, f);
      outside = checkOutside(i, probe, f, outside);
      undo(probe, reply, admin, inputs, f);
      if ((i + 1) % CHECK_EVERY == 0 || i == count - 1) {
        checkSandboxes("after input " + (i + 1), sandboxes, f);
      }
    }
    checkHeld(held);
    report(seed, count, System.nanoTime() - started, cpRoutes.size() + agentRoutes.size());
    assertThat(findings).as("findings (seed %d)", seed).isEmpty();
  }

  /** What lies outside A's workspace, as the inputs may not change it. */
  private record Outside(TreeSnapshot canary, Set<String> sandboxDir, Set<String> dataDir) {}

  private Outside outside(Fixture f) throws IOException {
    Set<String> data = names(plane.dataDir());
    // SQLite's own files come and go with its write-ahead log.
    data.removeIf(name -> name.startsWith("paddock.db"));
    return new Outside(TreeSnapshot.of(canary), names(f.workspace().getParent()), data);
  }

  /**
   * Checked after every input, so a finding names the input that changed something; the run goes on
   * from what it found.
   */
  private Outside checkOutside(int i, Probe probe, Fixture f, Outside before) throws IOException {
    Outside now = outside(f);
    if (!now.equals(before)) {
      findings.add(
          "#"
              + i
              + " "
              + probe.reproduction()
              + " -> changed what lies outside the workspace: "
              + before
              + " became "
              + now);
    }
    return now;
  }

  // ---------------------------------------------------------------- set-up

  /** Both sandboxes and how to reach them as their owners. */
  private record Sandboxes(
      PaddockClient alice, SandboxInfo a, PaddockClient bob, SandboxInfo b, Fixture fixture) {}

  private Sandboxes sandboxes(PaddockClient admin) throws IOException {
    PaddockClient.NewUser alice = admin.createUser("alice", false);
    PaddockClient.NewUser bob = admin.createUser("bob", false);
    PaddockClient.NewUser carol = admin.createUser("carol", false);
    assertThat(admin.revokeUser(carol.user().id())).isEqualTo(1);
    PaddockClient asAlice = PaddockClient.connect(URI.create(plane.url()), alice.apiKey());
    PaddockClient asBob = PaddockClient.connect(URI.create(plane.url()), bob.apiKey());

    SandboxInfo first = asAlice.create(Optional.empty(), true, Duration.ofSeconds(60));
    String revokedSession = first.sessionApiKey().orElseThrow();
    asAlice.pause(first.id());
    SandboxInfo a = asAlice.resume(first.id());
    SandboxInfo b = asBob.create(Optional.empty(), true, Duration.ofSeconds(60));

    StringBuilder pwd = new StringBuilder();
    assertThat(asAlice.agent(a).exec("pwd", 10, pwd::append, s -> {})).isZero();
    Path workspace = Path.of(pwd.toString().trim());
    canary = Files.createTempDirectory("paddock-canary-");
    String token = "canary-" + HexFormat.of().formatHex(randomBytes());
    Files.writeString(canary.resolve("secret.txt"), token);
    Files.createDirectory(canary.resolve("sub"));
    Files.writeString(canary.resolve("sub").resolve("f"), token);
    Fixture f =
        new Fixture(
            URI.create(plane.url()).getPort(),
            ControlPlane.ADMIN_KEY,
            alice.user().id(),
            alice.apiKey(),
            bob.user().id(),
            bob.apiKey(),
            carol.user().id(),
            carol.apiKeyId(),
            carol.apiKey(),
            a.id(),
            a.sessionApiKey().orElseThrow(),
            URI.create(a.agentServerUrl().orElseThrow()).getPort(),
            b.id(),
            b.sessionApiKey().orElseThrow(),
            URI.create(b.agentServerUrl().orElseThrow()).getPort(),
            revokedSession,
            workspace,
            canary,
            token);
    Sandboxes sandboxes = new Sandboxes(asAlice, a, asBob, b, f);
    layFixture(sandboxes);
    // The confinement the canary check relies on, and the revoked keys, proven before firing.
    assertThat(
            agentGet(
                    f,
                    f.agentA(),
                    "/api/file/download?path=" + canary + "/secret.txt",
                    f.sessionA())
                .status())
        .isEqualTo(403);
    assertThat(agentGet(f, f.agentA(), "/api/bash/commands", f.revokedSession()).status())
        .isEqualTo(401);
    assertThat(agentGet(f, f.agentA(), "/api/bash/commands", f.sessionB()).status()).isEqualTo(401);
    return sandboxes;
  }

  private static byte[] randomBytes() {
    byte[] bytes = new byte[16];
    ThreadLocalRandom.current().nextBytes(bytes);
    return bytes;
  }

  /** Files the inputs aim at: a link out of the workspace, a link loop, a FIFO, a git repo. */
  private void layFixture(Sandboxes s) {
    StringBuilder err = new StringBuilder();
    int exit = s.alice().agent(s.a()).exec(FIXTURE.formatted(canary), 30, out -> {}, err::append);
    if (exit != 0) {
      findings.add("the fixture could not be laid in A's workspace: exit " + exit + " " + err);
    }
  }

  /**
   * Requests left unfinished on purpose, held open (slowloris): each must be answered (408) or
   * closed by the header timeout (20 s), not kept forever.
   */
  private static List<CompletableFuture<Reply>> holdUnfinishedRequests(Fixture f) {
    byte[] unfinished =
        "GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: 1\r\n".getBytes(StandardCharsets.US_ASCII);
    List<CompletableFuture<Reply>> held = new ArrayList<>();
    for (int port : List.of(f.controlPlanePort(), f.controlPlanePort(), f.agentA(), f.agentB())) {
      CompletableFuture<Reply> reply = new CompletableFuture<>();
      Thread.ofVirtual()
          .start(
              () ->
                  reply.complete(
                      RawHttp.exchange(port, unfinished, false, Duration.ofSeconds(40))));
      held.add(reply);
    }
    return held;
  }

  private void checkHeld(List<CompletableFuture<Reply>> held) throws Exception {
    for (CompletableFuture<Reply> h : held) {
      Reply r = h.get(60, TimeUnit.SECONDS);
      if (r.kind() == Kind.HUNG) {
        findings.add("an unfinished request held open was neither answered nor closed in 40 s");
      } else if (r.kind() == Kind.ANSWERED && r.status() != 408) {
        findings.add("an unfinished request held open was answered " + r.status() + ", not 408");
      }
    }
  }

  // ---------------------------------------------------------------- invariants

  private void record(Probe probe, Reply reply) {
    String outcome =
        reply.kind() == Kind.ANSWERED
            ? String.valueOf(reply.status())
            : reply.kind().name().toLowerCase(java.util.Locale.ROOT);
    statuses.merge(outcome, 1, Integer::sum);
    hits.merge(
        probe.server().replace("agent-B", "agent-A") + " " + probe.summary(), 1, Integer::sum);
    slowest = Math.max(slowest, reply.millis());
  }

  private void check(int i, Probe probe, Reply reply, Fixture f) {
    String at = "#" + i + " " + probe.reproduction() + " -> ";
    switch (reply.kind()) {
      case HUNG -> findings.add(at + "no answer and no close within the bound");
      case CLOSED -> {
        // A request over 4 MiB may meet a reset while its body is still being sent (the reply,
        // a 413, may be lost with it); any other well-formed request must be answered.
        if (probe.wellFormed() && probe.bytes().length <= 4 << 20) {
          findings.add(at + "closed without an answer: " + reply.body());
        }
      }
      case ANSWERED -> checkAnswer(at, probe, reply, f);
    }
  }

  private void checkAnswer(String at, Probe probe, Reply reply, Fixture f) {
    int status = reply.status();
    boolean protocolRefusal = probe.route().isEmpty() && (status == 501 || status == 505);
    if (status >= 500 && !protocolRefusal) {
      findings.add(at + status + " " + abbreviate(reply.body()));
    }
    if (status < 100) {
      findings.add(at + "unreadable status line");
    }
    boolean head =
        new String(probe.bytes(), 0, Math.min(5, probe.bytes().length), StandardCharsets.ISO_8859_1)
            .equals("HEAD ");
    if (status >= 400 && !head && !hasDetail(reply)) {
      findings.add(
          at + status + " without a {\"detail\": ...} JSON body: " + abbreviate(reply.body()));
    }
    if (probe.route().isPresent() && !probe.privileged() && status >= 200 && status < 400) {
      findings.add(at + status + " for a credential that must be refused here");
    }
    for (String secret : secretsNotFor(probe, f)) {
      if (reply.body().contains(secret) || reply.headers().toString().contains(secret)) {
        findings.add(at + status + " carries a secret or the canary's content");
      }
    }
  }

  /** What no answer to {@code probe} may contain. */
  private static List<String> secretsNotFor(Probe probe, Fixture f) {
    List<String> secrets =
        new ArrayList<>(
            List.of(
                f.adminKey(),
                f.aliceKey(),
                f.bobKey(),
                ControlPlane.MASTER_SECRET,
                f.canaryToken()));
    if (!probe.server().equals("control-plane")) {
      secrets.add(f.sessionA());
      secrets.add(f.sessionB());
    } else {
      // A padded key that is accepted is Alice's own (header values lose their outer whitespace).
      Credential as = Inputs.actingAs(probe.credential());
      if (as != Credential.ALICE && as != Credential.ADMIN) {
        secrets.add(f.sessionA());
      }
      if (as != Credential.BOB && as != Credential.ADMIN) {
        secrets.add(f.sessionB());
      }
    }
    return secrets;
  }

  private static boolean hasDetail(Reply reply) {
    if (!reply.header("content-type").orElse("").contains("json")) {
      return false;
    }
    try {
      Map<String, Object> body = Json.parseObject(reply.body().getBytes(StandardCharsets.UTF_8));
      return body.get("detail") instanceof String;
    } catch (RuntimeException e) {
      return false;
    }
  }

  /** Removes what a successful input made that costs something: sandboxes, terminals. */
  private void undo(Probe probe, Reply reply, PaddockClient admin, Inputs inputs, Fixture f) {
    if (reply.kind() != Kind.ANSWERED || reply.status() >= 300 || reply.status() < 200) {
      return;
    }
    Optional<String> id = idIn(reply.body());
    if (probe.summary().equals("POST /api/v1/sandboxes") && id.isPresent()) {
      sandboxesCreated++;
      admin.delete(id.get());
    } else if (probe.summary().equals("POST /api/terminals") && id.isPresent()) {
      inputs.terminalCreated(id.get());
      agentRequest(f, probe.port(), "DELETE", "/api/terminals/" + id.get(), f.sessionA());
    }
  }

  private static Optional<String> idIn(String body) {
    try {
      return Json.parseObject(body.getBytes(StandardCharsets.UTF_8)).get("id") instanceof String s
          ? Optional.of(s)
          : Optional.empty();
    } catch (RuntimeException e) {
      return Optional.empty();
    }
  }

  /** Both sandboxes RUNNING, their agents answering with their keys, the control plane healthy. */
  private void checkSandboxes(String when, Sandboxes s, Fixture f) {
    Reply health =
        RawHttp.exchange(
            f.controlPlanePort(),
            Probe.request("GET", "/health", List.of(), new byte[0]),
            false,
            BOUND);
    if (health.status() != 200) {
      findings.add(when + ": control plane /health " + health.kind() + " " + health.status());
    }
    for (var owned : List.of(Map.entry(s.alice(), s.a()), Map.entry(s.bob(), s.b()))) {
      String status =
          owned.getKey().get(owned.getValue().id()).map(x -> x.status().name()).orElse("gone");
      if (!status.equals("RUNNING")) {
        findings.add(when + ": sandbox " + owned.getValue().id() + " is " + status);
      }
    }
    if (agentGet(f, f.agentA(), "/api/bash/commands", f.sessionA()).status() != 200) {
      findings.add(when + ": A's agent does not answer its key");
    }
    if (agentGet(f, f.agentB(), "/api/bash/commands", f.sessionB()).status() != 200) {
      findings.add(when + ": B's agent does not answer its key");
    }
    if (Files.exists(f.workspace().resolve("raw.txt"))) {
      findings.add(when + ": a truncated or malformed upload (an HTTP-layer input) was committed");
    }
    layFixture(s);
  }

  private static Reply agentGet(Fixture f, int port, String target, String key) {
    return agentRequest(f, port, "GET", target, key);
  }

  private static Reply agentRequest(Fixture f, int port, String method, String target, String key) {
    return RawHttp.exchange(
        port,
        Probe.request(method, target, List.of("X-Session-API-Key: " + key), new byte[0]),
        false,
        BOUND);
  }

  private static Set<String> names(Path dir) throws IOException {
    try (Stream<Path> list = Files.list(dir)) {
      return list.map(p -> p.getFileName().toString())
          .collect(java.util.stream.Collectors.toCollection(TreeSet::new));
    }
  }

  private static String abbreviate(String text) {
    return text.length() <= 300 ? text : text.substring(0, 300) + "...";
  }

  private void report(long seed, int count, long nanos, int routes) {
    System.out.printf(
        "bad input: seed %d, %d inputs in %.1f s, %d of %d routes hit, %d sandboxes created and"
            + " deleted by inputs, slowest answer %d ms%n",
        seed,
        count,
        nanos / 1e9,
        hits.keySet().stream().filter(k -> !k.contains("HTTP layer")).count(),
        routes,
        sandboxesCreated,
        slowest);
    System.out.println("bad input: outcomes " + statuses);
    System.out.println("bad input: findings " + findings.size());
    findings.stream().limit(40).forEach(x -> System.out.println("  " + x));
  }
}
