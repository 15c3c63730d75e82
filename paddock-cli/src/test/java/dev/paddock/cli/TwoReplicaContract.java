package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxStatus;
import dev.paddock.client.PaddockClient;
import dev.paddock.store.TestDatabase;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Two real {@code paddock server} processes ("replica A" and "replica B", each its own JVM and data
 * dir) on one real PostgreSQL schema, serving the same sandboxes: what one starts the other pauses,
 * resumes, shows and deletes, keys work through both, and a replica killed with SIGKILL in the
 * middle of a create, a pause or a delete leaves nothing that the other does not finish or undo.
 *
 * <p>A backend subclasses it with {@link #backendSettings()} (what both replicas need to reach the
 * same runtimes), {@link #agentPid} and {@link #assertNothingLeaked()}; {@code
 * ProcessTwoReplicaTest} is the process backend's. The replicas share the master secret (so both
 * derive the same session and admin keys) and the database (users, API-key hashes, sandboxes,
 * heartbeats, leases); nothing else. Reconcile runs every second and replica leases last 3 s, so
 * take-overs happen within seconds.
 */
abstract class TwoReplicaContract {
  private static final String MASTER_SECRET = "two-replica-test-master-secret-0123456789abcdef";
  private static final Duration SETTLES = Duration.ofSeconds(40);

  private TestDatabase database;
  private final List<Path> dataDirs = new ArrayList<>();
  private final Map<String, Process> replicas = new HashMap<>();
  private final HttpClient http = HttpClient.newHttpClient();

  /** What both replicas need to serve the same runtimes (e.g. {@code RUNTIME} and a shared dir). */
  protected abstract Map<String, String> backendSettings();

  /** The pid of a running sandbox's agent, to stop it answering for a while (SIGSTOP). */
  protected abstract long agentPid(String sandboxId) throws IOException;

  /** Fails when a runtime (process, cgroup, directory, pod...) of this test is left. */
  protected abstract void assertNothingLeaked() throws Exception;

  /** Removes what {@link #backendSettings()} made, once the replicas are gone and checked. */
  protected void removeBackendFiles() throws IOException {}

  @BeforeEach
  void createDatabase() {
    database = TestDatabase.postgres();
  }

  @AfterEach
  void stopReplicasAndCheck() throws Exception {
    if (database == null) {
      return; // skipped in set-up (no PostgreSQL configured): nothing was started
    }
    try {
      Optional<PaddockClient> live =
          replicas.entrySet().stream()
              .filter(e -> e.getValue().isAlive())
              .findFirst()
              .map(e -> client(urls.get(e.getKey())));
      if (live.isPresent()) {
        for (SandboxInfo left : live.get().list(dev.paddock.api.PageRequest.first(100)).items()) {
          live.get().delete(left.id());
        }
      }
    } finally {
      for (Process replica : replicas.values()) {
        replica.destroy();
        if (!replica.waitFor(20, TimeUnit.SECONDS)) {
          replica.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
      }
      database.close();
    }
    try {
      assertNothingLeaked();
    } finally {
      removeBackendFiles();
    }
    for (Path dir : dataDirs) {
      try (var paths = Files.walk(dir)) {
        for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
          Files.deleteIfExists(p);
        }
      }
    }
  }

  private final Map<String, String> urls = new HashMap<>();

  /** Starts replica {@code name} (its id is {@code cp-<name>}) and returns a client of it. */
  protected PaddockClient replica(String name) throws IOException {
    return replica(name, Map.of());
  }

  /** {@link #replica(String)} with {@code extra} settings on top of the shared ones. */
  protected PaddockClient replica(String name, Map<String, String> extra) throws IOException {
    Path dataDir = Files.createTempDirectory("paddock-replica-" + name + "-");
    dataDirs.add(dataDir);
    Map<String, String> env = new HashMap<>(backendSettings());
    env.put("PADDOCK_DATABASE_URL", database.url());
    env.put("PADDOCK_DATABASE_USER", database.user());
    env.put("PADDOCK_DATABASE_PASSWORD", database.password());
    env.put("PADDOCK_MASTER_SECRET", MASTER_SECRET);
    env.put("PADDOCK_ADMIN_KEY", ServerProcess.ADMIN_KEY);
    env.put("PADDOCK_REPLICA_ID", "cp-" + name);
    env.put("PADDOCK_REPLICA_LEASE_SECONDS", "3");
    env.put("PADDOCK_RECONCILE_SECONDS", "1");
    env.putAll(extra);
    ServerProcess.Launched launched = ServerProcess.launch(dataDir, env);
    replicas.put(name, launched.process());
    urls.put(name, launched.url());
    return client(launched.url());
  }

  private static PaddockClient client(String url) {
    return PaddockClient.connect(URI.create(url), ServerProcess.ADMIN_KEY);
  }

  /** SIGKILL: nothing of the replica runs on, no shutdown hook, no lease released. */
  protected void kill(String name) throws InterruptedException {
    replicas.get(name).destroyForcibly().waitFor(10, TimeUnit.SECONDS);
  }

  // One replica starts, the other serves

  @Test
  void sandboxStartedThroughOneReplicaIsPausedResumedAndDeletedThroughTheOther() throws Exception {
    PaddockClient a = replica("a");
    PaddockClient b = replica("b");

    SandboxInfo started = a.create(Optional.empty(), true, Duration.ofSeconds(60));
    String firstKey = started.sessionApiKey().orElseThrow();
    assertThat(b.get(started.id()).orElseThrow().status()).isEqualTo(SandboxStatus.RUNNING);
    assertThat(validate("b", firstKey)).as("B knows A's key").isEqualTo(200);
    assertThat(validate("a", firstKey)).isEqualTo(200);
    assertThat(exec(b, started.id(), "echo started-by-a")).isEqualTo("started-by-a\n");

    b.pause(started.id());
    assertThat(a.get(started.id()).orElseThrow().status()).isEqualTo(SandboxStatus.PAUSED);
    assertThat(validate("a", firstKey)).as("paused through B: revoked on A too").isEqualTo(401);

    SandboxInfo resumed = a.resume(started.id());
    String secondKey = resumed.sessionApiKey().orElseThrow();
    assertThat(secondKey).isNotEqualTo(firstKey);
    assertThat(validate("b", secondKey)).isEqualTo(200);
    assertThat(validate("b", firstKey)).isEqualTo(401);
    assertThat(exec(b, started.id(), "echo resumed-by-a")).isEqualTo("resumed-by-a\n");

    a.pause(started.id());
    SandboxInfo again = b.resume(started.id());
    assertThat(validate("a", again.sessionApiKey().orElseThrow())).isEqualTo(200);

    b.delete(started.id());
    assertThat(a.get(started.id())).isEmpty();
    assertThat(validate("a", again.sessionApiKey().orElseThrow())).isEqualTo(401);
  }

  @Test
  void sandboxesStartingOnOneReplicaAreNotReapedByTheOthersBackgroundWork() throws Exception {
    PaddockClient b = replica("b"); // first up: it takes the background lease
    PaddockClient a = replica("a");
    assertThat(leaseHolder()).contains("cp-b");

    List<SandboxInfo> starting = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      starting.add(a.create(Optional.empty(), false, Duration.ZERO));
    }

    for (SandboxInfo s : starting) {
      Awaitility.await(s.id() + " running")
          .atMost(Duration.ofSeconds(60))
          .until(() -> a.get(s.id()).orElseThrow().status() != SandboxStatus.STARTING);
      assertThat(a.get(s.id()).orElseThrow().status()).isEqualTo(SandboxStatus.RUNNING);
      assertThat(b.get(s.id()).orElseThrow().status()).isEqualTo(SandboxStatus.RUNNING);
    }
    assertThat(operations()).as("no operation left marked").isEmpty();
  }

  @Test
  void backgroundLeasePassesToTheSurvivorWhenItsHolderIsKilled() throws Exception {
    replica("a");
    replica("b");
    assertThat(leaseHolder()).contains("cp-a");

    kill("a");

    Awaitility.await("B takes the background lease over")
        .atMost(SETTLES)
        .until(() -> leaseHolder().equals(Optional.of("cp-b")));
  }

  // A replica killed mid-operation

  @Test
  void replicaKilledMidCreateLeavesAnErrorAndNoRuntime() throws Exception {
    PaddockClient a = replica("a");
    PaddockClient b = replica("b");

    SandboxInfo starting = a.create(Optional.empty(), false, Duration.ZERO);
    kill("a");

    Awaitility.await("B undoes the start A left")
        .atMost(SETTLES)
        .until(() -> b.get(starting.id()).orElseThrow().status() == SandboxStatus.ERROR);
    assertThat(b.get(starting.id()).orElseThrow().statusDetail().orElseThrow())
        .startsWith("The sandbox's start was cut short");
    assertThat(operations()).isEmpty();
    assertNothingLeaked(); // the runtime A was starting is gone while the record stays
    b.delete(starting.id());
    assertThat(b.get(starting.id())).isEmpty();
  }

  @Test
  void replicaKilledMidPauseLeavesItPausedAndResumableThroughTheOther() throws Exception {
    PaddockClient a = replica("a");
    PaddockClient b = replica("b");
    SandboxInfo running = a.create(Optional.empty(), true, Duration.ofSeconds(60));
    String key = running.sessionApiKey().orElseThrow();

    // An agent that does not answer holds the pause in its key revocation (5 s) after the store
    // marked it: the kill lands mid-pause.
    long agent = agentPid(running.id());
    signal(agent, "STOP");
    CompletableFuture<Void> pausing = CompletableFuture.runAsync(() -> a.pause(running.id()));
    awaitOperation(running.id(), "PAUSE");
    kill("a");
    signal(agent, "CONT");
    assertThat(pausing).failsWithin(Duration.ofSeconds(10));

    Awaitility.await("B finishes the pause A left")
        .atMost(SETTLES)
        .until(() -> b.get(running.id()).orElseThrow().status() == SandboxStatus.PAUSED);
    assertThat(validate("b", key)).isEqualTo(401);
    SandboxInfo resumed = b.resume(running.id());
    assertThat(exec(b, running.id(), "echo back")).isEqualTo("back\n");
    assertThat(validate("b", resumed.sessionApiKey().orElseThrow())).isEqualTo(200);
  }

  @Test
  void replicaKilledMidDeleteHasTheDeleteFinishedByTheOther() throws Exception {
    PaddockClient a = replica("a");
    PaddockClient b = replica("b");
    SandboxInfo running = a.create(Optional.empty(), true, Duration.ofSeconds(60));
    String key = running.sessionApiKey().orElseThrow();

    long agent = agentPid(running.id());
    signal(agent, "STOP");
    CompletableFuture<Void> deleting = CompletableFuture.runAsync(() -> a.delete(running.id()));
    awaitOperation(running.id(), "DELETE");
    kill("a");
    signal(agent, "CONT");
    assertThat(deleting).failsWithin(Duration.ofSeconds(10));
    assertThat(validate("b", key)).as("revoked before the kill").isEqualTo(401);

    Awaitility.await("B finishes the delete A left")
        .atMost(SETTLES)
        .until(() -> b.get(running.id()).isEmpty());
    assertNothingLeaked();
    assertThatThrownBy(() -> exec(b, running.id(), "true")).isInstanceOf(RuntimeException.class);
  }

  // Helpers

  /** {@code GET /api/v1/session/validate} on a replica with a session key: the status code. */
  private int validate(String replica, String sessionKey) throws Exception {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(urls.get(replica) + "/api/v1/session/validate"))
            .header("X-Session-API-Key", sessionKey)
            .timeout(Duration.ofSeconds(10))
            .build();
    return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  private static String exec(PaddockClient client, String id, String command) {
    SandboxInfo info = client.get(id).orElseThrow(() -> new IllegalStateException(id + " gone"));
    StringBuilder out = new StringBuilder();
    int exit = client.agent(info).exec(command, 10, out::append, e -> {});
    assertThat(exit).isZero();
    return out.toString();
  }

  private static void signal(long pid, String signal) throws Exception {
    Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).start();
    assertThat(kill.waitFor(10, TimeUnit.SECONDS)).isTrue();
    assertThat(kill.exitValue()).as("kill -" + signal + " " + pid).isZero();
  }

  private void awaitOperation(String sandboxId, String operation) {
    Awaitility.await(operation + " marked in the store")
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(20))
        .until(() -> operation.equals(operations().get(sandboxId)));
  }

  /** The operations under way, read behind the replicas' backs: sandbox id → kind. */
  private Map<String, String> operations() throws SQLException {
    Map<String, String> found = new HashMap<>();
    try (Connection c = database.connect();
        PreparedStatement q =
            c.prepareStatement("SELECT id, operation FROM sandboxes WHERE operation IS NOT NULL");
        ResultSet row = q.executeQuery()) {
      while (row.next()) {
        found.put(row.getString(1), row.getString(2));
      }
    }
    return found;
  }

  private Optional<String> leaseHolder() throws SQLException {
    try (Connection c = database.connect();
        PreparedStatement q =
            c.prepareStatement(
                "SELECT holder FROM leases WHERE name = 'background' AND expires_at > ?")) {
      q.setLong(1, System.currentTimeMillis());
      try (ResultSet row = q.executeQuery()) {
        return row.next() ? Optional.of(row.getString(1)) : Optional.empty();
      }
    }
  }
}
