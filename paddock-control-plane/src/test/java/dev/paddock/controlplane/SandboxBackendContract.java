package dev.paddock.controlplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.jr.ob.JSON;
import dev.paddock.api.ExposedUrl;
import dev.paddock.api.KeyDigest;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.ListedRuntime;
import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeRequest;
import dev.paddock.api.spi.RuntimeStartException;
import dev.paddock.api.spi.RuntimeState;
import dev.paddock.api.spi.SandboxAgent;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.backend.kit.protocol.AgentProtocol;
import dev.paddock.backend.kit.protocol.HttpAgents;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The contract every backend keeps at the SPI level, below the control plane: what {@link
 * SandboxServiceContract} cannot see because the service hides it (a vanished runtime inspected,
 * pause really freezing, idempotent pause and destroy, labels, adoption by a second backend
 * instance, bulk inspect, the agent seam, classified start failures, nothing leaked). Each check
 * goes through the real agent over a real socket, so a stub that only flips statuses fails it.
 *
 * <p>A backend module subclasses this (it is in this module's test-jar) with a factory, {@link
 * #newBackend()}; the other hooks have defaults. Backend instances made by one test must manage the
 * same runtimes, as two control planes on one host would.
 */
public abstract class SandboxBackendContract {
  /** The session key the agents of these tests accept (its digest is all the backend gets). */
  protected static final String KEY = "backend-contract-session-key";

  private static final String ADMIN_KEY = "backend-contract-admin-key";
  private static final Duration CALL = Duration.ofSeconds(30);

  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final HttpAgents agents = HttpAgents.create(Duration.ofSeconds(5));
  private final List<SandboxBackend> backends = new ArrayList<>();
  private final List<RuntimeHandle> started = new ArrayList<>();
  private SandboxBackend backend;

  // What a backend module supplies

  /** A new instance of the backend under test; instances made by one test share runtimes. */
  protected abstract SandboxBackend newBackend();

  /** A spec this backend starts; default: an empty spec (the backend's defaults). */
  protected SandboxSpec spec() {
    return SandboxSpec.builder("backend-contract").build();
  }

  /** A spec whose agent exits while starting; default: {@link #spec()} running {@code exit 3}. */
  protected SandboxSpec exitingSpec() {
    return spec().toBuilder()
        .command(List.of("bash", "-c", "echo 'secret detail: /srv/x' >&2; exit 3"))
        .build();
  }

  /**
   * The labels the runtime carries, read from the runtime itself (container labels, a process's
   * environment or marker), not from the handle; empty when the backend cannot show them.
   */
  protected Optional<Map<String, String>> labelsOf(RuntimeHandle handle) {
    return Optional.empty();
  }

  /**
   * Whether a paused runtime's processes come back on resume (frozen, then thawed: the default). A
   * backend whose pause ends them (the Kubernetes backend deletes the pod and keeps its volume)
   * says false: the contract then checks that nothing ran while paused and that the workspace, not
   * the processes, came back.
   */
  protected boolean pauseKeepsProcesses() {
    return true;
  }

  /**
   * Fails when anything the backend made is left (processes, cgroups, directories, containers).
   * Runs after every test, once every runtime was destroyed and every backend closed.
   */
  protected void assertNothingLeaked() throws Exception {}

  // Fixture

  @BeforeEach
  final void openBackend() {
    backend = backend();
  }

  @AfterEach
  final void destroyEverythingAndCheckLeaks() throws Exception {
    try {
      SandboxBackend cleaner = backend();
      for (RuntimeHandle handle : started) {
        cleaner.destroy(handle);
      }
      for (RuntimeHandle handle : cleaner.list()) {
        if (started.stream().anyMatch(h -> h.sandboxId().equals(handle.sandboxId()))) {
          cleaner.destroy(handle);
        }
      }
    } finally {
      backends.forEach(SandboxBackend::close);
      agents.close();
      http.close();
    }
    assertNothingLeaked();
  }

  // The contract

  @Test
  void aStartedRuntimeRunsAnAgentThatTakesOnlyTheGivenKey() throws Exception {
    RuntimeHandle handle = start();

    RuntimeState state = backend.inspect(handle);

    assertThat(state.status()).isEqualTo(SandboxStatus.RUNNING);
    assertThat(state.failure()).isEmpty();
    assertThat(status(handle, "/api/sessions", Optional.of(KEY))).isEqualTo(200);
    assertThat(status(handle, "/api/sessions", Optional.of("another-key"))).isEqualTo(401);
    assertThat(status(handle, "/api/sessions", Optional.empty())).isEqualTo(401);
  }

  @Test
  void inspectOfAVanishedRuntimeIsMissingAndNeverThrows() throws Exception {
    RuntimeHandle handle = start();
    backend.destroy(handle);

    assertThat(backend.inspect(handle).status()).isEqualTo(SandboxStatus.MISSING);
    RuntimeHandle stranger = new RuntimeHandle(newId(), backend.name(), handle.attributes());
    assertThat(backend.inspect(stranger).status()).isEqualTo(SandboxStatus.MISSING);
    RuntimeHandle empty = new RuntimeHandle(newId(), backend.name(), Map.of());
    assertThat(backend.inspect(empty).status()).isEqualTo(SandboxStatus.MISSING);
  }

  @Test
  void pauseFreezesEveryProcessAndIsIdempotent() throws Exception {
    RuntimeHandle handle = start();
    background(handle, "while :; do date +%s%3N >> ticks; sleep 0.02; done");
    await().atMost(CALL).until(() -> ticks(handle).size() > 3);

    backend.pause(handle);
    backend.pause(handle);
    long frozenFrom = System.currentTimeMillis();

    assertThat(backend.inspect(handle).status()).isEqualTo(SandboxStatus.PAUSED);
    assertThat(backend.inspect(handle).urls()).isEmpty();
    // A frozen agent answers nothing, for as long as it stays paused.
    await()
        .during(Duration.ofMillis(700))
        .atMost(Duration.ofSeconds(5))
        .until(() -> !answersAlive(agentUrl(handle, true)));
    long frozenTo = System.currentTimeMillis();

    RuntimeHandle resumed = resume(handle);

    if (!pauseKeepsProcesses()) {
      // The ticker ended with the pause: its earlier ticks are kept, and none came after.
      assertThat(ticks(resumed)).as("ticks kept in the workspace").isNotEmpty();
      assertThat(ticks(resumed))
          .as("ticks written while paused or after (%d..)", frozenFrom)
          .noneMatch(t -> t > frozenFrom + 20);
      return;
    }
    await().atMost(CALL).until(() -> ticks(resumed).stream().anyMatch(t -> t > frozenTo));
    assertThat(ticks(resumed))
        .as("ticks written while paused (%d..%d)", frozenFrom, frozenTo)
        .noneMatch(t -> t > frozenFrom + 20 && t < frozenTo - 20);
  }

  @Test
  void resumeBringsTheSameWorkspaceBack() throws Exception {
    RuntimeHandle handle = start();
    exec(handle, "echo kept > kept.txt");
    backend.pause(handle);

    RuntimeHandle resumed = resume(handle);

    assertThat(backend.inspect(resumed).status()).isEqualTo(SandboxStatus.RUNNING);
    assertThat(exec(resumed, "cat kept.txt")).isEqualTo("kept\n");
  }

  @Test
  void destroyIsIdempotentAndTheAgentStopsAnswering() throws Exception {
    RuntimeHandle running = start();
    RuntimeHandle paused = start();
    String runningUrl = agentUrl(running, false);
    String pausedUrl = agentUrl(paused, false);
    backend.pause(paused);

    backend.destroy(running);
    backend.destroy(paused);

    assertThatCode(() -> backend.destroy(running)).doesNotThrowAnyException();
    assertThatCode(() -> backend.destroy(paused)).doesNotThrowAnyException();
    assertThat(answersAlive(runningUrl)).isFalse();
    assertThat(answersAlive(pausedUrl)).isFalse();
    assertThat(ids(backend.list())).doesNotContain(running.sandboxId(), paused.sandboxId());
  }

  @Test
  void runtimesAreLabelledWithTheirSandbox() throws Exception {
    RuntimeHandle handle = start();

    assertThat(ids(backend.list())).contains(handle.sandboxId());
    assertThat(handle.backend()).isEqualTo(backend.name());
    // The agent itself says which sandbox it serves (the label reaches its commands).
    assertThat(exec(handle, "echo \"$SANDBOX_ID\"")).isEqualTo(handle.sandboxId() + "\n");
    labelsOf(handle)
        .ifPresent(
            labels ->
                assertThat(labels)
                    .containsEntry("paddock.managed", "true")
                    .containsEntry("paddock.sandbox-id", handle.sandboxId()));
  }

  @Test
  void aRestartedBackendAdoptsWhatTheFirstStarted() throws Exception {
    RuntimeHandle handle = start();
    backend.close();

    SandboxBackend restarted = backend();

    RuntimeHandle listed =
        restarted.list().stream()
            .filter(h -> h.sandboxId().equals(handle.sandboxId()))
            .findFirst()
            .orElseThrow(() -> new AssertionError("the runtime was not listed after a restart"));
    assertThat(restarted.inspect(listed).status()).isEqualTo(SandboxStatus.RUNNING);
    assertThat(status(listed, "/api/sessions", Optional.of(KEY), restarted)).isEqualTo(200);
    restarted.pause(listed);
    assertThat(restarted.inspect(listed).status()).isEqualTo(SandboxStatus.PAUSED);
    restarted.destroy(listed);
    assertThat(restarted.inspect(listed).status()).isEqualTo(SandboxStatus.MISSING);
  }

  @Test
  void listWithStateTellsWhatInspectTells() throws Exception {
    RuntimeHandle running = start();
    RuntimeHandle paused = start();
    backend.pause(paused);

    Map<String, SandboxStatus> listed = new LinkedHashMap<>();
    for (ListedRuntime runtime : backend.listWithState()) {
      listed.put(runtime.handle().sandboxId(), runtime.state().status());
    }

    assertThat(listed)
        .containsEntry(running.sandboxId(), SandboxStatus.RUNNING)
        .containsEntry(paused.sandboxId(), SandboxStatus.PAUSED);
  }

  @Test
  void keysAreReplacedThroughTheBackendsAgentSeam() throws Exception {
    RuntimeHandle handle = start();
    String next = "backend-contract-next-key";

    agent(handle).replaceSessionKeys(List.of(KeyDigest.sha256Hex(next)));

    assertThat(status(handle, "/api/sessions", Optional.of(next))).isEqualTo(200);
    assertThat(status(handle, "/api/sessions", Optional.of(KEY))).isEqualTo(401);
    agent(handle).replaceSessionKeys(List.of());
    assertThat(status(handle, "/api/sessions", Optional.of(next))).isEqualTo(401);
  }

  @Test
  void theWorkspaceArchiveStreamsThroughTheAgentSeam() throws Exception {
    RuntimeHandle handle = start();
    exec(handle, "echo archived > in-archive.txt");

    Optional<SandboxAgent.Archive> archive =
        agent(handle).openArchive(AgentProtocol.TAR_GZ, true, CALL);

    assertThat(archive).isPresent();
    try (SandboxAgent.Archive a = archive.get()) {
      byte[] gzip = a.body().readAllBytes();
      assertThat(gzip.length).isGreaterThan(20);
      assertThat(gzip[0] & 0xff).isEqualTo(0x1f); // gzip magic
      assertThat(gzip[1] & 0xff).isEqualTo(0x8b);
    }
  }

  @Test
  void anAgentThatExitsWhileStartingIsClassifiedAndLeavesNothing() {
    String id = newId();

    assertThatThrownBy(() -> backend.start(request(id, exitingSpec())))
        .isInstanceOfSatisfying(
            RuntimeStartException.class,
            e -> {
              assertThat(e.failure().kind()).isEqualTo(RuntimeFailure.Kind.EXITED);
              assertThat(e.failure().safeMessage()).doesNotContain("/srv/x");
            });
    assertThat(ids(backend.list())).doesNotContain(id);
  }

  // Helpers for subclasses and the tests above

  /** A fresh backend instance, closed after the test. */
  protected final SandboxBackend backend() {
    SandboxBackend made = newBackend();
    backends.add(made);
    return made;
  }

  /** Starts a runtime of {@link #spec()} with {@link #KEY}; destroyed after the test. */
  protected final RuntimeHandle start() {
    String id = newId();
    RuntimeHandle handle = backend.start(request(id, spec()));
    started.add(handle);
    return handle;
  }

  /** A new sandbox id ({@code sb-} prefix, as leak checks expect). */
  protected static String newId() {
    byte[] bytes = new byte[6];
    ThreadLocalRandom.current().nextBytes(bytes);
    return "sb-kit-" + HexFormat.of().formatHex(bytes);
  }

  private static RuntimeRequest request(String id, SandboxSpec spec) {
    return new RuntimeRequest(
        id, spec, Map.of(), List.of(KeyDigest.sha256Hex(KEY)), KeyDigest.sha256Hex(ADMIN_KEY));
  }

  /** Resumes and makes the agent take {@link #KEY} again (a restarted agent may hold none). */
  private RuntimeHandle resume(RuntimeHandle handle) {
    RuntimeHandle resumed = backend.resume(handle);
    started.add(resumed);
    agent(resumed).replaceSessionKeys(List.of(KeyDigest.sha256Hex(KEY)));
    return resumed;
  }

  private SandboxAgent agent(RuntimeHandle handle) {
    return backend.agent(handle, agents.at(agentUrl(handle, false), ADMIN_KEY));
  }

  /** The agent URL; for a paused runtime (no URLs) the one it had when it ran. */
  private String agentUrl(RuntimeHandle handle, boolean remembered) {
    if (remembered) {
      return urls.getOrDefault(handle.sandboxId(), "http://127.0.0.1:1");
    }
    String url = agentUrl(handle, backend);
    urls.put(handle.sandboxId(), url);
    return url;
  }

  private final Map<String, String> urls = new java.util.concurrent.ConcurrentHashMap<>();

  private static String agentUrl(RuntimeHandle handle, SandboxBackend backend) {
    return backend.inspect(handle).urls().stream()
        .filter(u -> u.name().equals(ExposedUrl.AGENT_SERVER))
        .map(ExposedUrl::url)
        .findFirst()
        .orElseThrow(() -> new AssertionError(handle.sandboxId() + " exposes no agent URL"));
  }

  private int status(RuntimeHandle handle, String route, Optional<String> key) throws Exception {
    return status(handle, route, key, backend);
  }

  private int status(
      RuntimeHandle handle, String route, Optional<String> key, SandboxBackend backend)
      throws Exception {
    String url = agentUrl(handle, backend);
    urls.put(handle.sandboxId(), url);
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url + route)).timeout(CALL);
    key.ifPresent(k -> request.header(AgentProtocol.SESSION_KEY_HEADER, k));
    return http.send(request.build(), HttpResponse.BodyHandlers.discarding()).statusCode();
  }

  private boolean answersAlive(String url) {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(url + AgentProtocol.ALIVE))
            .timeout(Duration.ofMillis(500))
            .build();
    try {
      return http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  /** Runs {@code command} in the workspace through the agent; its standard output. */
  protected final String exec(RuntimeHandle handle, String command) throws Exception {
    Map<String, Object> result =
        JSON.std.mapFrom(post(handle, "/api/bash/execute_bash_command", command, 60));
    return String.valueOf(result.get("stdout"));
  }

  private void background(RuntimeHandle handle, String command) throws Exception {
    post(handle, "/api/bash/start_bash_command", command, 900);
  }

  private String post(RuntimeHandle handle, String route, String command, int timeout)
      throws Exception {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("command", command);
    body.put("timeout", timeout);
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(agentUrl(handle, false) + route))
            .timeout(Duration.ofSeconds(timeout + 30L))
            .header(AgentProtocol.SESSION_KEY_HEADER, KEY)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(JSON.std.asString(body)))
            .build();
    HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return response.body();
  }

  private List<Long> ticks(RuntimeHandle handle) throws Exception {
    return exec(handle, "cat ticks 2>/dev/null || true")
        .lines()
        .filter(line -> line.matches("\\d{13}"))
        .map(Long::parseLong)
        .toList();
  }

  private static List<String> ids(List<RuntimeHandle> handles) {
    return handles.stream().map(RuntimeHandle::sandboxId).toList();
  }
}
