package dev.paddock.hardening.faults;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.PageRequest;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxStatus;
import dev.paddock.cli.ServerProcess;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The store unavailable for 10 s: a real {@code paddock server} (its own process: process backend,
 * the gateway on, its reconcile loop every second) on a real PostgreSQL of the test's own ({@link
 * PrivatePostgres}), which the test stops with {@code pg_ctl stop -m fast} while two sandboxes run
 * and starts again after at least 10 s of requests.
 *
 * <p>During the outage: every API request that needs the store (get, list, create, delete, {@code
 * /metrics}) answers a prompt 503 whose detail says the store is unavailable, naming neither the
 * database's host and port nor JDBC or a Java class (the first may wait the pool's 2 s connection
 * timeout; every later one fails at once, without waiting the pool); {@code /health} turns 503
 * saying the store is unreachable while {@code /alive} and {@code /ready} stay 200; the sandboxes'
 * agents keep answering through the gateway, on the route it had before. After PostgreSQL is back,
 * without restarting the control plane: requests work again, both sandboxes are RUNNING with the
 * keys and files they had and stay so over the next reconcile passes, the refused create left
 * nothing, and a new sandbox starts and is deleted. {@link ServerProcess} then checks that no agent
 * process or cgroup is left, {@link PrivatePostgres} that no server process or directory is.
 */
class StoreOutageTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(60);
  private static final Duration OUTAGE = Duration.ofSeconds(10);

  /**
   * The pool's connection timeout (2 s, Dialect.POSTGRESQL) and some slack for a busy machine: what
   * a request may wait before the pool has failed to connect. Which request meets that window is a
   * race (the first may get a pooled connection the server already closed and fail at once, the
   * next wait for the pool's reconnect), so the bound holds for every request begun within it.
   */
  private static final long FIRST_ANSWER_MS = 3_500;

  /** Once the pool has failed to connect, an answer needs no round trip to anything. */
  private static final long LATER_ANSWER_MS = 1_000;

  @RegisterExtension
  @Order(1)
  final PrivatePostgres postgres = new PrivatePostgres();

  @RegisterExtension
  @Order(2)
  final ServerProcess server = new ServerProcess();

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @Test
  void requestsAnswer503PromptlyWhileTheStoreIsDownAndEverythingIsBackAfter() throws Exception {
    String url =
        server.start(
            Map.of(
                "PADDOCK_DATABASE_URL", postgres.url(),
                "PADDOCK_DATABASE_USER", PrivatePostgres.USER,
                "PADDOCK_DATABASE_PASSWORD", PrivatePostgres.PASSWORD));
    Users bob = Users.create(url, ServerProcess.ADMIN_KEY, "bob");
    SandboxInfo a = bob.client().create(Optional.empty(), true, TIMEOUT);
    SandboxInfo b = bob.client().create(Optional.empty(), true, TIMEOUT);
    bob.run(a, "printf 'kept-a\\n' > notes.txt");
    bob.run(b, "printf 'kept-b\\n' > notes.txt");
    assertThat(a.agentServerUrl().orElseThrow()).as("agent through the gateway").startsWith(url);

    List<Answer> answers = new ArrayList<>();
    List<Integer> health = new ArrayList<>();
    postgres.stop();
    long stoppedAt = System.nanoTime();
    try {
      while (System.nanoTime() - stoppedAt < OUTAGE.toNanos()) {
        answers.add(timed(bob, "GET", "/api/v1/sandboxes/" + a.id()));
        answers.add(timed(bob, "GET", "/api/v1/sandboxes/search"));
        answers.add(timed(bob, "POST", "/api/v1/sandboxes?wait=true"));
        answers.add(timed(bob, "DELETE", "/api/v1/sandboxes/" + b.id()));
        answers.add(timed(bob, "GET", "/metrics"));
        health.add(get(url + "/health").statusCode());
        assertThat(get(url + "/alive").statusCode()).isEqualTo(200);
        assertThat(get(url + "/ready").statusCode()).isEqualTo(200);
        assertThat(bob.run(b, "cat notes.txt"))
            .as("b's agent through the gateway")
            .isEqualTo("kept-b\n");
      }
      HttpResponse<String> down = get(url + "/health");
      assertThat(down.statusCode()).as(down.body()).isEqualTo(503);
      assertThat(down.body()).contains("\"store\":\"unreachable\"", "\"detail\"");
    } finally {
      postgres.start();
    }
    long startedAt = System.nanoTime();

    assertThat(answers).allSatisfy(this::assertStoreUnavailable);
    long window = stoppedAt + FIRST_ANSWER_MS * 1_000_000;
    List<Answer> early = answers.stream().filter(answer -> answer.startNanos() < window).toList();
    List<Answer> later = answers.stream().filter(answer -> answer.startNanos() >= window).toList();
    assertThat(early)
        .as("answers begun while the pool may still be reconnecting")
        .allSatisfy(answer -> assertThat(answer.millis()).isLessThan(FIRST_ANSWER_MS));
    assertThat(later)
        .as("every later answer, without a wait on the pool")
        .isNotEmpty()
        .allSatisfy(answer -> assertThat(answer.millis()).isLessThan(LATER_ANSWER_MS));
    assertThat(health).as("/health during the outage").contains(503);

    Awaitility.await("the API answers again")
        .atMost(Duration.ofSeconds(30))
        .until(() -> timed(bob, "GET", "/api/v1/sandboxes/" + a.id()).status() == 200);
    // The figures docs/RELIABILITY.md quotes, in the test's output.
    System.out.printf(
        "store outage: %d answers, first %d ms, slowest in the first %d ms %d ms, later max %d ms;"
            + " API back %d ms after the start%n",
        answers.size(),
        answers.getFirst().millis(),
        FIRST_ANSWER_MS,
        early.stream().mapToLong(Answer::millis).max().orElse(0),
        later.stream().mapToLong(Answer::millis).max().orElse(0),
        (System.nanoTime() - startedAt) / 1_000_000);
    Awaitility.await("/health says ok again")
        .atMost(Duration.ofSeconds(10))
        .until(() -> get(url + "/health").statusCode() == 200);
    Awaitility.await("both still RUNNING with their keys over the next reconcile passes")
        .during(Duration.ofSeconds(2))
        .atMost(Duration.ofSeconds(10))
        .until(() -> runningWithTheirKeys(bob, a, b));
    assertThat(bob.run(a, "cat notes.txt")).isEqualTo("kept-a\n");
    assertThat(bob.run(b, "cat notes.txt")).isEqualTo("kept-b\n");
    assertThat(bob.client().list(PageRequest.first(10)).items())
        .as("the create refused during the outage left nothing")
        .extracting(SandboxInfo::id)
        .containsExactlyInAnyOrder(a.id(), b.id());
    SandboxInfo c = bob.client().create(Optional.empty(), true, TIMEOUT);
    assertThat(bob.run(c, "echo new")).isEqualTo("new\n");
    bob.client().delete(c.id());
    assertThat(bob.client().get(c.id())).isEmpty();
  }

  private static boolean runningWithTheirKeys(Users user, SandboxInfo... before) {
    for (SandboxInfo sandbox : before) {
      SandboxInfo now = user.client().get(sandbox.id()).orElseThrow();
      if (now.status() != SandboxStatus.RUNNING
          || !now.sessionApiKey().equals(sandbox.sessionApiKey())) {
        return false;
      }
    }
    return true;
  }

  /** A 503 {@code {"detail": ...}} saying the store is unavailable, and nothing of its insides. */
  private void assertStoreUnavailable(Answer answer) {
    assertThat(answer.status()).as(answer.toString()).isEqualTo(503);
    assertThat(answer.body())
        .as(answer.toString())
        .contains("\"detail\"", "store is unavailable")
        .doesNotContain(
            "127.0.0.1:" + postgres.port(),
            String.valueOf(postgres.port()),
            "SQLState",
            "jdbc",
            "postgres",
            "Exception",
            "Connection refused");
  }

  /** One request's status, body and how long its answer took. */
  record Answer(String request, int status, String body, long startNanos, long millis) {}

  /**
   * One request, answered, with when it began and how long it took (the Docker fault reads it too).
   */
  static Answer timed(Users user, String method, String path) throws Exception {
    return timed(user, method, path, TIMEOUT);
  }

  /** As {@link #timed(Users, String, String)}, waiting at most {@code timeout} for the answer. */
  static Answer timed(Users user, String method, String path, Duration timeout) throws Exception {
    long start = System.nanoTime();
    HttpResponse<String> response = user.send(method, path, timeout);
    long millis = (System.nanoTime() - start) / 1_000_000;
    return new Answer(method + " " + path, response.statusCode(), response.body(), start, millis);
  }

  private HttpResponse<String> get(String url) throws Exception {
    HttpRequest request = HttpRequest.newBuilder(URI.create(url)).timeout(TIMEOUT).build();
    return http.send(request, HttpResponse.BodyHandlers.ofString());
  }
}
