package dev.paddock.controlplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.jr.ob.JSON;
import dev.paddock.api.ArchiveStore;
import dev.paddock.api.Caller;
import dev.paddock.api.CapacityExceededException;
import dev.paddock.api.InvalidRequestException;
import dev.paddock.api.KeyDigest;
import dev.paddock.api.LifetimeAction;
import dev.paddock.api.Page;
import dev.paddock.api.PageRequest;
import dev.paddock.api.Resources;
import dev.paddock.api.SandboxException;
import dev.paddock.api.SandboxFilter;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxSpecService;
import dev.paddock.api.SandboxStartException;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.StartRequest;
import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeRequest;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.store.SandboxOperation;
import dev.paddock.store.SandboxRecord;
import dev.paddock.store.SandboxStore;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The contract every backend keeps, proved through {@link ControlPlaneSandboxService}: lifecycle
 * transitions, session-key rules (checked against the real agent over a socket), owner scoping,
 * capacity, idempotence, start failures, restart recovery, and nothing leaked.
 *
 * <p>A backend module subclasses this (it is published in this module's test-jar) and supplies a
 * backend factory, a store, two specs (one that starts, one whose start fails) and a leak check.
 * Backend instances made by one test must share the runtimes they manage, as two control planes on
 * one host would: the restart tests start a second instance and expect it to find the first one's
 * runtimes. Each test ends by deleting every sandbox, closing what it opened and running the leak
 * check.
 */
public abstract class SandboxServiceContract {
  protected static final Caller ALICE = Caller.user("alice");
  protected static final Caller BOB = Caller.user("bob");
  protected static final Caller ADMIN = Caller.admin("admin");
  protected static final Duration READY = Duration.ofSeconds(60);

  private static final String MASTER_SECRET = "contract-suite-master-secret-0123456789abcdef";
  private static final String SESSION_HEADER = "X-Session-API-Key";

  /** Appends the time in ms to {@code ticks} in the workspace every 20 ms, until ended. */
  private static final String TICKER = "while :; do date +%s%3N >> ticks; sleep 0.02; done";

  private final TickingClock clock = new TickingClock();
  private final Map<String, RuntimeFailure.Kind> startFailures = new ConcurrentHashMap<>();
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final List<SandboxBackend> backends = new ArrayList<>();
  private final List<ControlPlaneSandboxService> services = new ArrayList<>();
  private SandboxStore store;
  private SandboxBackend backend;
  private ControlPlaneSandboxService service;

  // What a backend module supplies

  /**
   * A new instance of the backend under test. Instances made within one test manage the same
   * runtimes (a second instance lists and adopts what the first started).
   */
  protected abstract SandboxBackend newBackend();

  /** A new, empty store for one test. */
  protected abstract SandboxStore newStore();

  /** The same data through a store instance fit for a restarted control plane; default: reuse. */
  protected SandboxStore reopen(SandboxStore store) {
    return store;
  }

  /** A spec this backend starts; the default spec of every test. */
  protected abstract SandboxSpec runnableSpec();

  /** A spec whose start this backend fails (e.g. a missing binary or image). */
  protected abstract SandboxSpec failingSpec();

  /** Further specs a subclass's own tests use; none by default. */
  protected List<SandboxSpec> extraSpecs() {
    return List.of();
  }

  /** Whether commands in this backend's sandboxes see the env a create asks for; default yes. */
  protected boolean backendAppliesEnv() {
    return true;
  }

  /**
   * The class of failure {@link #failingSpec()}'s start ends in; default {@code EXITED} (the agent
   * exits while starting). The contract asserts exactly this kind, and its safe message.
   */
  protected RuntimeFailure.Kind failingSpecKind() {
    return RuntimeFailure.Kind.EXITED;
  }

  /**
   * Whether a paused sandbox's processes come back on resume (frozen, then thawed: the default). A
   * backend whose pause ends them (the Kubernetes backend deletes the pod and keeps its volume)
   * says false: the contract then checks that nothing ran while paused, that the workspace came
   * back, and that a new process runs after the resume.
   */
  protected boolean pauseKeepsProcesses() {
    return true;
  }

  /**
   * Where every delete of a RUNNING sandbox archives its workspace first (archive-before-delete on,
   * required, {@code tar.gz}, prefix {@code ws}); empty (the default): archiving off. Return the
   * same store on every call.
   */
  protected Optional<ArchiveStore> archiveStore() {
    return Optional.empty();
  }

  /**
   * Fails when anything a backend made is left (runtimes, processes, directories, containers). Runs
   * after every test, once every sandbox was deleted and services and backends were closed.
   */
  protected abstract void assertNothingLeaked() throws Exception;

  // Fixture

  @BeforeEach
  final void openControlPlane() {
    store = newStore();
    backend = newBackend();
    backends.add(backend);
    service = service(config());
  }

  @AfterEach
  final void closeControlPlaneAndCheckLeaks() throws Exception {
    if (store == null || service == null) {
      // Set-up did not get that far (e.g. a skipped PostgreSQL run): nothing was started.
      http.close();
      return;
    }
    try {
      deleteEverything();
    } finally {
      services.forEach(ControlPlaneSandboxService::close);
      backends.forEach(SandboxBackend::close);
      store.close();
      http.close();
    }
    assertNothingLeaked();
  }

  private void deleteEverything() {
    Optional<String> pageId = Optional.empty();
    List<String> ids = new ArrayList<>();
    do {
      Page<SandboxInfo> page = service.search(ADMIN, new PageRequest(pageId, 100));
      page.items().forEach(s -> ids.add(s.id()));
      pageId = page.nextPageId();
    } while (pageId.isPresent());
    ids.forEach(id -> service.delete(ADMIN, id));
    // A test that failed half-way may have left a runtime no record names.
    backend.list().forEach(backend::destroy);
  }

  /**
   * Settings every test starts from: the suite's master secret and clock, no limits, the start
   * failures recorded by kind, and archiving as {@link #archiveStore()} says.
   */
  protected ControlPlaneConfig.Builder config() {
    ControlPlaneConfig.Builder config =
        ControlPlaneConfig.builder(MASTER_SECRET)
            .clock(clock)
            .startTimeout(READY)
            .events(
                new SandboxEvents() {
                  @Override
                  public void startFailed(String sandboxId, RuntimeFailure.Kind kind) {
                    startFailures.put(sandboxId, kind);
                  }
                });
    archiveStore()
        .ifPresent(
            archives ->
                config
                    .archives(
                        new ArchiveSettings(
                            true, true, ArchiveSettings.TAR_GZ, Duration.ofSeconds(60), "ws"))
                    .archiveStore(archives));
    return config;
  }

  /** A service with {@code config}, over this test's store and current backend; becomes current. */
  protected final ControlPlaneSandboxService service(ControlPlaneConfig.Builder config) {
    ControlPlaneSandboxService created =
        ControlPlaneSandboxService.create(store, backend, specs(), config.build());
    services.add(created);
    service = created;
    return created;
  }

  /** Simulates a control-plane restart: closes the service, opens a new one on a new backend. */
  protected final ControlPlaneSandboxService restart() {
    service.close();
    store = reopen(store);
    backend = newBackend();
    backends.add(backend);
    return service(config());
  }

  private SandboxSpecService specs() {
    List<SandboxSpec> all = new ArrayList<>(List.of(runnableSpec(), failingSpec()));
    all.addAll(extraSpecs());
    return ConfiguredSpecService.of(all, ForwardedEnvironment.none());
  }

  protected final ControlPlaneSandboxService service() {
    return service;
  }

  protected final SandboxStore store() {
    return store;
  }

  protected final SandboxBackend backend() {
    return backend;
  }

  /** A started sandbox as {@code waitUntilRunning} returned it, and the key its start issued. */
  protected record Started(SandboxInfo info, String key) {
    public String id() {
      return info.id();
    }

    public String url() {
      return info.agentServerUrl().orElseThrow();
    }
  }

  protected final Started startRunning(Caller caller) {
    return startRunning(caller, Optional.empty());
  }

  protected final Started startRunning(Caller caller, Optional<String> id) {
    SandboxInfo started = service.start(caller, Optional.empty(), id);
    String key = started.sessionApiKey().orElseThrow();
    return new Started(service.waitUntilRunning(caller, started.id(), READY), key);
  }

  /**
   * Runs {@code command} on the agent at {@code url} with {@code key}; the HTTP status, or -1 when
   * nothing answers.
   */
  protected final int execute(String url, Optional<String> key, String command) {
    return bash(url, key, command).map(HttpResponse::statusCode).orElse(-1);
  }

  protected final Optional<HttpResponse<String>> bash(
      String url, Optional<String> key, String command) {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(url + "/api/bash/execute_bash_command"))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/json")
            .POST(
                HttpRequest.BodyPublishers.ofString(
                    "{\"command\":\"" + command.replace("\"", "\\\"") + "\",\"timeout\":20}"));
    key.ifPresent(k -> request.header(SESSION_HEADER, k));
    try {
      return Optional.of(http.send(request.build(), HttpResponse.BodyHandlers.ofString()));
    } catch (IOException e) {
      return Optional.empty();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }

  /**
   * Starts {@code command} in the background on the agent at {@code url} (ends with the sandbox).
   */
  private void startInBackground(String url, String key, String command) throws Exception {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(url + "/api/bash/start_bash_command"))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/json")
            .header(SESSION_HEADER, key)
            .POST(
                HttpRequest.BodyPublishers.ofString(
                    JSON.std.asString(Map.of("command", command, "timeout", 900))))
            .build();
    HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
  }

  /** The timestamps the ticker wrote so far, read through the agent. */
  private List<Long> ticks(String url, String key) throws IOException {
    HttpResponse<String> cat =
        bash(url, Optional.of(key), "cat ticks 2>/dev/null || true").orElseThrow();
    assertThat(cat.statusCode()).as(cat.body()).isEqualTo(200);
    return String.valueOf(JSON.std.mapFrom(cat.body()).get("stdout"))
        .lines()
        .filter(line -> line.matches("\\d{13}"))
        .map(Long::parseLong)
        .toList();
  }

  private SandboxStatus statusOf(Caller caller, String id) {
    return service.get(caller, id).orElseThrow().status();
  }

  // Lifecycle

  @Test
  void startReturnsAtOnceWithTheKeyAndBecomesRunning() {
    SandboxInfo started = service.start(ALICE, Optional.empty(), Optional.empty());

    assertThat(started.status()).isEqualTo(SandboxStatus.STARTING);
    assertThat(started.sessionApiKey()).isPresent();
    assertThat(started.createdByUserId()).contains("alice");
    assertThat(started.sandboxSpecId()).isEqualTo(runnableSpec().id());

    SandboxInfo running = service.waitUntilRunning(ALICE, started.id(), READY);
    assertThat(running.status()).isEqualTo(SandboxStatus.RUNNING);
    assertThat(running.agentServerUrl()).isPresent();
    assertThat(running.sessionApiKey()).isEmpty();
  }

  @Test
  void pauseFreezesAndResumeBringsTheSameWorkspaceBack() {
    Started sandbox = startRunning(ALICE);
    assertThat(execute(sandbox.url(), Optional.of(sandbox.key()), "echo kept > marker.txt"))
        .isEqualTo(200);

    assertThat(service.pause(ALICE, sandbox.id())).isTrue();
    SandboxInfo paused = service.get(ALICE, sandbox.id()).orElseThrow();
    assertThat(paused.status()).isEqualTo(SandboxStatus.PAUSED);
    assertThat(paused.exposedUrls()).isEmpty();

    SandboxInfo resumed = service.resume(ALICE, sandbox.id()).orElseThrow();
    assertThat(resumed.status()).isEqualTo(SandboxStatus.RUNNING);
    HttpResponse<String> cat =
        bash(resumed.agentServerUrl().orElseThrow(), resumed.sessionApiKey(), "cat marker.txt")
            .orElseThrow();
    assertThat(cat.statusCode()).isEqualTo(200);
    assertThat(cat.body()).contains("kept");
  }

  @Test
  void nothingInThePausedSandboxRunsUntilItIsResumed() throws Exception {
    Started sandbox = startRunning(ALICE);
    startInBackground(sandbox.url(), sandbox.key(), TICKER);
    Awaitility.await("the ticker ticks")
        .atMost(READY)
        .until(() -> ticks(sandbox.url(), sandbox.key()).size() > 3);

    service.pause(ALICE, sandbox.id());
    long pausedAt = System.currentTimeMillis();
    // Not synchronisation: the window over which "nothing runs while paused" is observed. The
    // ticker writes a timestamp every 20 ms, so 400 ms paused would leave ~20 of them; none may
    // fall inside the window (read after the resume, as nothing can be read while paused).
    Awaitility.await("the sandbox stays paused")
        .during(Duration.ofMillis(400))
        .atMost(Duration.ofSeconds(10))
        .until(() -> statusOf(ALICE, sandbox.id()) == SandboxStatus.PAUSED);
    long resumedAt = System.currentTimeMillis();
    SandboxInfo resumed = service.resume(ALICE, sandbox.id()).orElseThrow();
    String url = resumed.agentServerUrl().orElseThrow();
    String key = resumed.sessionApiKey().orElseThrow();

    if (!pauseKeepsProcesses()) {
      assertThat(ticks(url, key))
          .as("ticks kept in the workspace, none written while paused or after (%d..)", pausedAt)
          .isNotEmpty()
          .noneMatch(t -> t > pausedAt + 20);
      startInBackground(url, key, TICKER);
    }
    Awaitility.await("ticks after the resume")
        .atMost(READY)
        .until(() -> ticks(url, key).stream().anyMatch(t -> t > resumedAt));
    assertThat(ticks(url, key))
        .as("ticks written while paused (%d..%d)", pausedAt, resumedAt)
        .noneMatch(t -> t > pausedAt + 20 && t < resumedAt - 20);
  }

  @Test
  void deleteRemovesTheSandboxAndItsRuntime() throws Exception {
    Started sandbox = startRunning(ALICE);
    assertThat(execute(sandbox.url(), Optional.of(sandbox.key()), "echo kept > kept.txt"))
        .isEqualTo(200);

    assertThat(service.delete(ALICE, sandbox.id())).isTrue();

    if (archiveStore().isPresent()) {
      assertThat(archiveStore().get().list("ws/" + sandbox.id() + "/"))
          .as("the workspace archived before the delete")
          .isNotEmpty();
    }

    assertThat(service.get(ALICE, sandbox.id())).isEmpty();
    assertThat(store.find(sandbox.id())).isEmpty();
    assertThat(backend.list()).extracting(RuntimeHandle::sandboxId).doesNotContain(sandbox.id());
    assertThat(execute(sandbox.url(), Optional.of(sandbox.key()), "true")).isNotEqualTo(200);
  }

  // Session keys

  @Test
  void sessionKeyOpensTheAgentAndNothingElseDoes() {
    Started sandbox = startRunning(ALICE);

    assertThat(execute(sandbox.url(), Optional.of(sandbox.key()), "echo hi")).isEqualTo(200);
    assertThat(execute(sandbox.url(), Optional.of("not-the-key"), "echo hi")).isEqualTo(401);
    assertThat(execute(sandbox.url(), Optional.empty(), "echo hi")).isEqualTo(401);
  }

  @Test
  void sessionKeyIsHonouredOnlyWhileRunning() {
    Started sandbox = startRunning(ALICE);
    assertThat(service.getBySessionKey(sandbox.key()))
        .get()
        .extracting(SandboxInfo::id)
        .isEqualTo(sandbox.id());

    service.pause(ALICE, sandbox.id());

    assertThat(service.getBySessionKey(sandbox.key())).isEmpty();
    assertThat(service.getBySessionKey("some-other-key")).isEmpty();
    assertThat(service.getBySessionKey("")).isEmpty();
  }

  @Test
  void resumeIssuesANewKeyAndTheAgentRefusesTheOldOne() {
    Started sandbox = startRunning(ALICE);
    service.pause(ALICE, sandbox.id());

    SandboxInfo resumed = service.resume(ALICE, sandbox.id()).orElseThrow();
    String newKey = resumed.sessionApiKey().orElseThrow();
    String url = resumed.agentServerUrl().orElseThrow();

    assertThat(newKey).isNotEqualTo(sandbox.key());
    assertThat(execute(url, Optional.of(sandbox.key()), "true")).isEqualTo(401);
    assertThat(execute(url, Optional.of(newKey), "true")).isEqualTo(200);
    assertThat(service.getBySessionKey(sandbox.key())).isEmpty();
    assertThat(service.getBySessionKey(newKey)).isPresent();
  }

  @Test
  void keyIsShownOnceAndStoredOnlyAsItsHash() {
    Started sandbox = startRunning(ALICE);

    assertThat(sandbox.key().length()).as("256 bits, base64url").isGreaterThanOrEqualTo(43);
    assertThat(service.get(ALICE, sandbox.id()).orElseThrow().sessionApiKey()).isEmpty();
    assertThat(service.search(ALICE, PageRequest.first(10)).items())
        .allSatisfy(s -> assertThat(s.sessionApiKey()).isEmpty());
    assertThat(service.batchGet(ALICE, List.of(sandbox.id())))
        .allSatisfy(s -> assertThat(s.orElseThrow().sessionApiKey()).isEmpty());
    assertThat(service.getBySessionKey(sandbox.key()).orElseThrow().sessionApiKey()).isEmpty();

    SandboxRecord record = store.find(sandbox.id()).orElseThrow();
    assertThat(record.sessionKeyHash()).contains(KeyDigest.sha256Hex(sandbox.key()));
    assertThat(record.toString()).doesNotContain(sandbox.key());
    assertThat(record.runtime().orElseThrow().attributes().values())
        .noneMatch(v -> v.contains(sandbox.key()));
  }

  @Test
  void deleteRevokesTheKey() {
    Started sandbox = startRunning(ALICE);

    service.delete(ALICE, sandbox.id());

    assertThat(service.getBySessionKey(sandbox.key())).isEmpty();
    assertThat(execute(sandbox.url(), Optional.of(sandbox.key()), "true")).isNotEqualTo(200);
  }

  // Owners

  @Test
  void otherUsersNeitherSeeNorTouchASandbox() {
    Started sandbox = startRunning(ALICE);

    assertThat(service.get(BOB, sandbox.id())).isEmpty();
    assertThat(service.batchGet(BOB, List.of(sandbox.id()))).containsExactly(Optional.empty());
    assertThat(service.search(BOB, PageRequest.first(10)).items()).isEmpty();
    assertThat(service.pause(BOB, sandbox.id())).isFalse();
    assertThat(service.resume(BOB, sandbox.id())).isEmpty();
    assertThat(service.delete(BOB, sandbox.id())).isFalse();
    assertThatThrownBy(() -> service.waitUntilRunning(BOB, sandbox.id(), READY))
        .isInstanceOf(SandboxException.class)
        .hasMessageContaining("not found");

    assertThat(statusOf(ALICE, sandbox.id())).isEqualTo(SandboxStatus.RUNNING);
  }

  @Test
  void anAdminSeesAndManagesEverySandbox() {
    Started alices = startRunning(ALICE);
    Started bobs = startRunning(BOB);

    assertThat(service.search(ADMIN, PageRequest.first(10)).items())
        .extracting(SandboxInfo::id)
        .containsExactlyInAnyOrder(alices.id(), bobs.id());
    assertThat(service.search(ALICE, PageRequest.first(10)).items())
        .extracting(SandboxInfo::id)
        .containsExactly(alices.id());
    assertThat(service.pause(ADMIN, bobs.id())).isTrue();
    assertThat(statusOf(BOB, bobs.id())).isEqualTo(SandboxStatus.PAUSED);
    assertThat(service.delete(ADMIN, alices.id())).isTrue();
    assertThat(service.get(ALICE, alices.id())).isEmpty();
  }

  @Test
  void searchPagesNewestFirst() {
    for (String id : List.of("first", "second", "third")) {
      service.start(ALICE, Optional.empty(), Optional.of(id));
    }

    Page<SandboxInfo> page1 = service.search(ALICE, PageRequest.first(2));
    assertThat(page1.items()).extracting(SandboxInfo::id).containsExactly("third", "second");
    Page<SandboxInfo> page2 = service.search(ALICE, new PageRequest(page1.nextPageId(), 2));
    assertThat(page2.items()).extracting(SandboxInfo::id).containsExactly("first");
    assertThat(page2.nextPageId()).isEmpty();
  }

  // Capacity

  @Test
  void startPastTheTotalLimitIsRefusedNamingTheLimit() {
    service(config().maxSandboxes(1));
    Started first = startRunning(ALICE);

    assertThatThrownBy(() -> service.start(BOB, Optional.empty(), Optional.empty()))
        .isInstanceOf(CapacityExceededException.class)
        .hasMessageContaining("at capacity")
        .hasMessageContaining("(max 1)");

    service.pause(ALICE, first.id());
    Started second = startRunning(BOB);
    assertThatThrownBy(() -> service.resume(ALICE, first.id()))
        .isInstanceOf(CapacityExceededException.class)
        .hasMessageContaining("(max 1)");
    assertThat(statusOf(ALICE, first.id())).isEqualTo(SandboxStatus.PAUSED);
    assertThat(statusOf(BOB, second.id())).isEqualTo(SandboxStatus.RUNNING);
  }

  @Test
  void startPastThePerUserLimitIsRefusedNamingTheLimit() {
    service(config().maxSandboxesPerUser(1));
    startRunning(ALICE);

    assertThatThrownBy(() -> service.start(ALICE, Optional.empty(), Optional.empty()))
        .isInstanceOf(CapacityExceededException.class)
        .hasMessageContaining("at capacity: 1 running sandbox per user (max 1)");
    assertThat(startRunning(BOB).info().status()).isEqualTo(SandboxStatus.RUNNING);
  }

  @Test
  void pauseOldestMakesRoomInsteadOfRefusing() {
    service(config().maxSandboxes(1).pauseOldest(true));
    Started oldest = startRunning(ALICE);

    Started newest = startRunning(BOB);

    assertThat(statusOf(ALICE, oldest.id())).isEqualTo(SandboxStatus.PAUSED);
    assertThat(service.getBySessionKey(oldest.key())).isEmpty();
    assertThat(statusOf(BOB, newest.id())).isEqualTo(SandboxStatus.RUNNING);

    service.resume(ALICE, oldest.id());
    assertThat(statusOf(BOB, newest.id())).isEqualTo(SandboxStatus.PAUSED);
    assertThat(statusOf(ALICE, oldest.id())).isEqualTo(SandboxStatus.RUNNING);
  }

  // Idempotence

  @Test
  void pauseResumeAndDeleteAreIdempotent() {
    Started sandbox = startRunning(ALICE);

    assertThat(service.pause(ALICE, sandbox.id())).isTrue();
    assertThat(service.pause(ALICE, sandbox.id())).isTrue();
    assertThat(statusOf(ALICE, sandbox.id())).isEqualTo(SandboxStatus.PAUSED);

    SandboxInfo resumed = service.resume(ALICE, sandbox.id()).orElseThrow();
    SandboxInfo again = service.resume(ALICE, sandbox.id()).orElseThrow();
    assertThat(again.status()).isEqualTo(SandboxStatus.RUNNING);
    assertThat(again.sessionApiKey()).as("a key is shown only once").isEmpty();
    assertThat(service.getBySessionKey(resumed.sessionApiKey().orElseThrow())).isPresent();

    assertThat(service.delete(ALICE, sandbox.id())).isTrue();
    assertThat(service.delete(ALICE, sandbox.id())).isFalse();
  }

  @Test
  void unknownSandboxesAreNotFound() {
    assertThat(service.get(ALICE, "no-such-sandbox")).isEmpty();
    assertThat(service.pause(ALICE, "no-such-sandbox")).isFalse();
    assertThat(service.resume(ALICE, "no-such-sandbox")).isEmpty();
    assertThat(service.delete(ALICE, "no-such-sandbox")).isFalse();
    assertThat(service.archiveWorkspace(ALICE, "no-such-sandbox", Optional.empty())).isTrue();
  }

  // Start failures

  @Test
  void startFailureEndsInErrorWithASafeMessageAndAReference() {
    SandboxInfo started = service.start(ALICE, Optional.of(failingSpec().id()), Optional.empty());
    String id = started.id();
    RuntimeFailure.Kind kind = failingSpecKind();
    String safeDetail = kind.safeMessage() + " (reference: " + id + ")";

    assertThatThrownBy(() -> service.waitUntilRunning(ALICE, id, READY))
        .isInstanceOf(SandboxStartException.class)
        .hasMessage(safeDetail);
    assertThat(startFailures.get(id)).as("the failure's kind").isNotNull();
    assertThat(startFailures.get(id).id()).as("the failure's kind").isEqualTo(kind.id());
    SandboxInfo failed = service.get(ALICE, id).orElseThrow();
    assertThat(failed.status()).isEqualTo(SandboxStatus.ERROR);
    assertThat(failed.statusDetail()).contains(safeDetail);
    assertThat(failed.exposedUrls()).isEmpty();
    assertThat(service.getBySessionKey(started.sessionApiKey().orElseThrow())).isEmpty();
    assertThat(store.find(id).orElseThrow().sessionKeyHash()).isEmpty();

    assertThat(service.delete(ALICE, id)).isTrue();
  }

  @Test
  void unknownSpecsAndMalformedOrTakenIdsAreRejected() {
    assertThatThrownBy(() -> service.start(ALICE, Optional.of("no-such-spec"), Optional.empty()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("no-such-spec");
    assertThatThrownBy(() -> service.start(ALICE, Optional.empty(), Optional.of("Bad_Id!")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("malformed");
    service.start(ALICE, Optional.empty(), Optional.of("taken-id"));
    assertThatThrownBy(() -> service.start(BOB, Optional.empty(), Optional.of("taken-id")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("taken");
  }

  // Create with settings, find and describe (issue 9)

  @Test
  void createWithSettingsPassesEnvToTheSandboxAndKeepsTheRest() {
    StartRequest request =
        StartRequest.builder()
            .env(Map.of("TEAM_NAME", "ml-platform"))
            .labels(Map.of("team", "ml", "paddock.dev/purpose", "test"))
            .resources(
                new Resources(
                    OptionalDouble.empty(),
                    OptionalLong.of(1L << 30),
                    OptionalInt.of(512),
                    OptionalLong.empty()))
            .timeout(Duration.ofMinutes(10))
            .idleTimeout(Duration.ofMinutes(2))
            .onIdle(LifetimeAction.DELETE)
            .build();
    SandboxInfo started = service.start(ALICE, request);
    SandboxInfo running = service.waitUntilRunning(ALICE, started.id(), READY);

    if (backendAppliesEnv()) {
      HttpResponse<String> echo =
          bash(running.agentServerUrl().orElseThrow(), started.sessionApiKey(), "echo v=$TEAM_NAME")
              .orElseThrow();
      assertThat(echo.body()).contains("v=ml-platform");
    }
    SandboxInfo shown = service.get(ALICE, started.id()).orElseThrow();
    assertThat(shown.settings().labels())
        .containsExactlyInAnyOrderEntriesOf(Map.of("team", "ml", "paddock.dev/purpose", "test"));
    assertThat(shown.settings().resources().memoryBytes()).hasValue(1L << 30);
    assertThat(shown.settings().resources().pids()).hasValue(512);
    assertThat(shown.settings().idleTimeout()).contains(Duration.ofMinutes(2));
    assertThat(shown.settings().onIdle()).isEqualTo(LifetimeAction.DELETE);
    assertThat(shown.settings().workingDir()).isPresent();
    assertThat(shown.timeoutAt()).contains(shown.createdAt().plus(Duration.ofMinutes(10)));
    assertThat(shown.lastActivityAt()).isPresent();
  }

  @Test
  void searchFindsSandboxesByLabelsStatusAndSpec() {
    SandboxInfo ml =
        service.start(ALICE, StartRequest.builder().labels(Map.of("team", "ml")).build());
    SandboxInfo web =
        service.start(ALICE, StartRequest.builder().labels(Map.of("team", "web")).build());
    service.start(BOB, StartRequest.builder().labels(Map.of("team", "ml")).build());
    service.waitUntilRunning(ALICE, ml.id(), READY);
    service.waitUntilRunning(ALICE, web.id(), READY);
    service.pause(ALICE, web.id());

    assertThat(ids(ALICE, new SandboxFilter(Set.of(), Map.of("team", "ml"), Optional.empty())))
        .containsExactly(ml.id());
    assertThat(
            ids(ALICE, new SandboxFilter(Set.of(SandboxStatus.PAUSED), Map.of(), Optional.empty())))
        .containsExactly(web.id());
    assertThat(ids(ALICE, new SandboxFilter(Set.of(), Map.of(), Optional.of(failingSpec().id()))))
        .isEmpty();
    assertThat(ids(ALICE, new SandboxFilter(Set.of(), Map.of(), Optional.of(runnableSpec().id()))))
        .containsExactlyInAnyOrder(ml.id(), web.id());
  }

  @Test
  void labelsAreReplacedAndValidated() {
    SandboxInfo started =
        service.start(ALICE, StartRequest.builder().labels(Map.of("a", "1")).build());

    SandboxInfo relabelled = service.setLabels(ALICE, started.id(), Map.of("b", "2")).orElseThrow();

    assertThat(relabelled.settings().labels()).containsExactly(Map.entry("b", "2"));
    assertThat(ids(ALICE, new SandboxFilter(Set.of(), Map.of("a", "1"), Optional.empty())))
        .isEmpty();
    assertThat(service.setLabels(BOB, started.id(), Map.of("c", "3"))).isEmpty();
    assertThatThrownBy(() -> service.setLabels(ALICE, started.id(), Map.of("bad key!", "x")))
        .isInstanceOf(InvalidRequestException.class)
        .hasMessageContaining("bad key!");
    assertThat(service.get(ALICE, started.id()).orElseThrow().settings().labels())
        .containsExactly(Map.entry("b", "2"));
  }

  @Test
  void keepAliveMovesTheDeadlineWithinTheMaximum() {
    service(
        config()
            .limits(limits(Optional.of(Duration.ofMinutes(5)), Optional.of(Duration.ofHours(1)))));
    SandboxInfo started = service.start(ALICE, StartRequest.defaults());
    assertThat(started.timeoutAt()).contains(started.createdAt().plus(Duration.ofMinutes(5)));

    SandboxInfo kept = service.keepAlive(ALICE, started.id(), Duration.ofMinutes(30)).orElseThrow();

    assertThat(kept.timeoutAt().orElseThrow())
        .isAfter(started.createdAt().plus(Duration.ofMinutes(29)));
    assertThatThrownBy(() -> service.keepAlive(ALICE, started.id(), Duration.ofHours(2)))
        .isInstanceOf(InvalidRequestException.class)
        .hasMessageContaining("PADDOCK_MAX_TIMEOUT");
    assertThatThrownBy(
            () -> service.start(ALICE, StartRequest.builder().timeout(Duration.ofHours(2)).build()))
        .isInstanceOf(InvalidRequestException.class)
        .hasMessageContaining("PADDOCK_MAX_TIMEOUT");
    assertThat(service.keepAlive(BOB, started.id(), Duration.ofMinutes(1))).isEmpty();
    assertThat(service.keepAlive(ALICE, started.id()))
        .get()
        .satisfies(i -> assertThat(i.timeoutAt()).isPresent());
  }

  @Test
  void createsOutsideTheOperatorsBoundsAreRefusedNamingWhatIsAllowed() {
    service(
        config()
            .limits(
                new SandboxLimits(
                    List.of("registry.example/*"),
                    OptionalDouble.of(2),
                    OptionalLong.of(1L << 30),
                    OptionalInt.of(100),
                    OptionalLong.empty(),
                    Optional.empty(),
                    Optional.empty(),
                    Optional.empty())));

    assertThatThrownBy(() -> service.start(ALICE, StartRequest.builder().specId("nope").build()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("allowed: [" + runnableSpec().id());
    assertThatThrownBy(
            () -> service.start(ALICE, StartRequest.builder().image("evil/miner").build()))
        .isInstanceOfSatisfying(
            InvalidRequestException.class, e -> assertThat(e.malformed()).as("a 400").isTrue())
        .hasMessageContaining("registry.example/*");
    assertThatThrownBy(
            () ->
                service.start(
                    ALICE,
                    StartRequest.builder()
                        .resources(
                            new Resources(
                                OptionalDouble.of(4),
                                OptionalLong.empty(),
                                OptionalInt.empty(),
                                OptionalLong.empty()))
                        .build()))
        .isInstanceOf(InvalidRequestException.class)
        .hasMessageContaining("PADDOCK_MAX_CPUS");
    assertThatThrownBy(
            () ->
                service.start(
                    ALICE,
                    StartRequest.builder().env(Map.of("PADDOCK_AGENT_ADMIN_KEY", "x")).build()))
        .isInstanceOf(InvalidRequestException.class)
        .hasMessageContaining("reserved");
    assertThatThrownBy(
            () -> service.start(ALICE, StartRequest.builder().env(Map.of("1BAD", "x")).build()))
        .isInstanceOf(InvalidRequestException.class)
        .hasMessageContaining("1BAD");
    assertThat(service.search(ADMIN, PageRequest.first(10)).items()).isEmpty();
  }

  // Session keys that survive restarts

  @Test
  void theOwnerGetsTheCurrentKeyAfterARestartAndNobodyElseDoes() {
    Started sandbox = startRunning(ALICE);
    assertThat(service.sessionKey(ALICE, sandbox.id())).contains(sandbox.key());

    ControlPlaneSandboxService restarted = restart();

    assertThat(restarted.sessionKey(ALICE, sandbox.id())).contains(sandbox.key());
    assertThat(restarted.sessionKey(ADMIN, sandbox.id())).isEmpty();
    assertThat(restarted.sessionKey(BOB, sandbox.id())).isEmpty();
    SandboxRecord record = store().find(sandbox.id()).orElseThrow();
    assertThat(record.toString()).doesNotContain(sandbox.key());
  }

  @Test
  void anotherControlPlaneWithTheSameSecretComputesTheSameKey() {
    Started sandbox = startRunning(ALICE);

    ControlPlaneSandboxService other = service(config());

    assertThat(other.sessionKey(ALICE, sandbox.id())).contains(sandbox.key());
    try (ControlPlaneSandboxService foreign =
        ControlPlaneSandboxService.create(
            store(),
            backend(),
            ConfiguredSpecService.of(List.of(runnableSpec()), ForwardedEnvironment.none()),
            ControlPlaneConfig.builder("a-different-master-secret-0123456789abcdef").build())) {
      assertThat(foreign.sessionKey(ALICE, sandbox.id()))
          .as("a different master secret derives a different key, which is not given")
          .isEmpty();
    }
  }

  @Test
  void pauseRevokesTheDerivedKeyAndResumeIssuesTheNextOne() {
    Started sandbox = startRunning(ALICE);

    service.pause(ALICE, sandbox.id());
    assertThat(service.sessionKey(ALICE, sandbox.id())).isEmpty();
    SandboxInfo resumed = service.resume(ALICE, sandbox.id()).orElseThrow();

    String newKey = resumed.sessionApiKey().orElseThrow();
    assertThat(newKey).isNotEqualTo(sandbox.key());
    assertThat(service.sessionKey(ALICE, sandbox.id())).contains(newKey);
    assertThat(restart().sessionKey(ALICE, sandbox.id())).contains(newKey);
  }

  @Test
  void anAdminResumingAUsersSandboxGetsNoKey() {
    Started sandbox = startRunning(ALICE);
    service.pause(ADMIN, sandbox.id());

    SandboxInfo resumed = service.resume(ADMIN, sandbox.id()).orElseThrow();

    assertThat(resumed.status()).isEqualTo(SandboxStatus.RUNNING);
    assertThat(resumed.sessionApiKey()).isEmpty();
    assertThat(service.sessionKey(ADMIN, sandbox.id())).isEmpty();
    String aliceKey = service.sessionKey(ALICE, sandbox.id()).orElseThrow();
    assertThat(execute(resumed.agentServerUrl().orElseThrow(), Optional.of(aliceKey), "true"))
        .isEqualTo(200);
  }

  @Test
  void aNonOwnersDeleteChangesNothing() {
    Started sandbox = startRunning(ALICE);
    SandboxRecord before = store().find(sandbox.id()).orElseThrow();

    assertThat(service.delete(BOB, sandbox.id())).isFalse();
    assertThat(service.setLabels(BOB, sandbox.id(), Map.of())).isEmpty();
    assertThat(service.sessionKey(BOB, sandbox.id())).isEmpty();

    assertThat(store().find(sandbox.id())).contains(before);
    assertThat(service.sessionKey(ALICE, sandbox.id())).contains(sandbox.key());
    assertThat(execute(sandbox.url(), Optional.of(sandbox.key()), "true")).isEqualTo(200);
  }

  @Test
  void aReusedIdNeverRepeatsItsPredecessorsKey() {
    Started first = startRunning(ALICE, Optional.of("reused-id"));
    service.delete(ALICE, first.id());

    Started second = startRunning(BOB, Optional.of("reused-id"));

    assertThat(second.key()).isNotEqualTo(first.key());
    assertThat(service.getBySessionKey(first.key())).isEmpty();
  }

  private List<String> ids(Caller caller, SandboxFilter filter) {
    return service.search(caller, filter, PageRequest.first(100)).items().stream()
        .map(SandboxInfo::id)
        .toList();
  }

  private static SandboxLimits limits(Optional<Duration> defaultTimeout, Optional<Duration> max) {
    return new SandboxLimits(
        List.of(),
        OptionalDouble.empty(),
        OptionalLong.empty(),
        OptionalInt.empty(),
        OptionalLong.empty(),
        defaultTimeout,
        max,
        Optional.empty());
  }

  // Lifetimes

  @Test
  void aSandboxPastItsTimeoutIsDeletedOnceEvenAcrossARestart() {
    SandboxInfo started =
        service.start(ALICE, StartRequest.builder().timeout(Duration.ofMinutes(5)).build());
    service.waitUntilRunning(ALICE, started.id(), READY);
    assertThat(service.enforceLifetimes()).isEmpty();

    clock.advance(Duration.ofMinutes(6));
    ControlPlaneSandboxService restarted = restart();

    assertThat(restarted.enforceLifetimes()).containsExactly(started.id());
    assertThat(restarted.get(ALICE, started.id())).isEmpty();
    assertThat(restarted.enforceLifetimes()).isEmpty();
    assertThat(service.getBySessionKey(started.sessionApiKey().orElseThrow())).isEmpty();
  }

  @Test
  void onTimeoutPauseFreezesAndResumeGivesTheLifetimeBack() {
    SandboxInfo started =
        service.start(
            ALICE,
            StartRequest.builder()
                .timeout(Duration.ofMinutes(5))
                .onTimeout(LifetimeAction.PAUSE)
                .build());
    service.waitUntilRunning(ALICE, started.id(), READY);

    clock.advance(Duration.ofMinutes(6));
    assertThat(service.enforceLifetimes()).containsExactly(started.id());

    assertThat(statusOf(ALICE, started.id())).isEqualTo(SandboxStatus.PAUSED);
    assertThat(service.enforceLifetimes()).as("fires once").isEmpty();
    SandboxInfo resumed = service.resume(ALICE, started.id()).orElseThrow();
    assertThat(resumed.status()).isEqualTo(SandboxStatus.RUNNING);
    assertThat(service.enforceLifetimes()).isEmpty();
    assertThat(service.get(ALICE, started.id()).orElseThrow().timeoutAt()).isPresent();
  }

  @Test
  void keepAlivePostponesTheTimeout() {
    SandboxInfo started =
        service.start(ALICE, StartRequest.builder().timeout(Duration.ofMinutes(5)).build());
    service.waitUntilRunning(ALICE, started.id(), READY);

    clock.advance(Duration.ofMinutes(4));
    service.keepAlive(ALICE, started.id(), Duration.ofMinutes(10));
    clock.advance(Duration.ofMinutes(4));

    assertThat(service.enforceLifetimes()).isEmpty();
    assertThat(statusOf(ALICE, started.id())).isEqualTo(SandboxStatus.RUNNING);
  }

  @Test
  void anIdleSandboxIsPausedAndOneWhoseAgentIsCalledIsNot() {
    StartRequest fiveSecondsIdle =
        StartRequest.builder()
            .idleTimeout(Duration.ofSeconds(5))
            .onIdle(LifetimeAction.PAUSE)
            .build();
    SandboxInfo idle = service.start(ALICE, fiveSecondsIdle);
    SandboxInfo busy = service.start(ALICE, fiveSecondsIdle);
    String busyUrl =
        service.waitUntilRunning(ALICE, busy.id(), READY).agentServerUrl().orElseThrow();
    service.waitUntilRunning(ALICE, idle.id(), READY);
    List<String> ended = new ArrayList<>();

    // The suite's clock only ticks per reading, so each round moves it a second on, while the
    // busy agent is called every round: its idle_time stays below the five seconds even where
    // reaching an agent takes a while (SSH hosts under load).
    Awaitility.await("the idle sandbox is paused")
        .atMost(Duration.ofSeconds(30))
        .pollInterval(Duration.ofMillis(200))
        .until(
            () -> {
              execute(busyUrl, busy.sessionApiKey(), "true");
              clock.advance(Duration.ofSeconds(1));
              ended.addAll(service.enforceLifetimes());
              return ended.contains(idle.id());
            });

    assertThat(ended).containsExactly(idle.id());
    assertThat(statusOf(ALICE, idle.id())).isEqualTo(SandboxStatus.PAUSED);
    assertThat(statusOf(ALICE, busy.id())).isEqualTo(SandboxStatus.RUNNING);
    assertThat(service.get(ALICE, busy.id()).orElseThrow().lastActivityAt().orElseThrow())
        .isAfter(busy.createdAt());
  }

  // Several replicas on one store

  @Test
  void deleteLeftByAGoneReplicaIsFinishedByReconcile() {
    Started sandbox = startRunning(ALICE);
    markOperation(sandbox.id(), SandboxOperation.Kind.DELETE, "cp-gone");

    ReconcileReport report = service.reconcile();

    assertThat(report.takenOver()).containsExactly(sandbox.id());
    assertThat(store.find(sandbox.id())).isEmpty();
    assertThat(backend.list()).extracting(RuntimeHandle::sandboxId).doesNotContain(sandbox.id());
    assertThat(service.getBySessionKey(sandbox.key())).isEmpty();
  }

  @Test
  void pauseLeftByAGoneReplicaIsFinishedByReconcile() {
    Started sandbox = startRunning(ALICE);
    markOperation(sandbox.id(), SandboxOperation.Kind.PAUSE, "cp-gone");

    assertThat(service.reconcile().takenOver()).containsExactly(sandbox.id());

    assertThat(statusOf(ALICE, sandbox.id())).isEqualTo(SandboxStatus.PAUSED);
    assertThat(service.getBySessionKey(sandbox.key())).isEmpty();
    assertThat(store.find(sandbox.id()).orElseThrow().operation()).isEmpty();
    SandboxInfo resumed = service.resume(ALICE, sandbox.id()).orElseThrow();
    assertThat(resumed.status()).isEqualTo(SandboxStatus.RUNNING);
  }

  @Test
  void startLeftByAGoneReplicaIsUndoneAndItsRuntimeDestroyed() {
    String digest = KeyDigest.sha256Hex("left-key");
    backend.start(
        new RuntimeRequest("left-starting", runnableSpec(), Map.of(), List.of(digest), digest));
    Instant now = clock.instant();
    store.insert(
        new SandboxRecord(
                "left-starting",
                ALICE.userId(),
                runnableSpec().id(),
                SandboxStatus.STARTING,
                Optional.of(digest),
                Optional.empty(),
                Optional.empty(),
                now,
                now,
                0)
            .withOperation(
                Optional.of(new SandboxOperation(SandboxOperation.Kind.START, "cp-gone"))));

    assertThat(service.reconcile().takenOver()).containsExactly("left-starting");

    SandboxInfo failed = service.get(ALICE, "left-starting").orElseThrow();
    assertThat(failed.status()).isEqualTo(SandboxStatus.ERROR);
    assertThat(failed.statusDetail())
        .contains(StartFailures.detail(StartFailures.ABANDONED, "left-starting"));
    assertThat(backend.list()).extracting(RuntimeHandle::sandboxId).doesNotContain("left-starting");
    assertThat(store.find("left-starting").orElseThrow().sessionKeyHash()).isEmpty();
  }

  @Test
  void operationOfALiveReplicaIsLeftAloneByReconcile() {
    Started sandbox = startRunning(ALICE);
    store.heartbeat("cp-busy", Duration.ofMinutes(1));
    try {
      markOperation(sandbox.id(), SandboxOperation.Kind.DELETE, "cp-busy");

      ReconcileReport report = service.reconcile();

      assertThat(report.takenOver()).isEmpty();
      assertThat(store.find(sandbox.id()).orElseThrow().operation())
          .contains(new SandboxOperation(SandboxOperation.Kind.DELETE, "cp-busy"));
      assertThat(statusOf(ALICE, sandbox.id())).isEqualTo(SandboxStatus.RUNNING);
    } finally {
      markOperation(sandbox.id(), Optional.empty());
      store.retireReplica("cp-busy");
    }
  }

  @Test
  void backgroundWorkRunsOnTheLeaseHolderOnly() {
    ControlPlaneSandboxService first = service;
    ControlPlaneSandboxService second = service(config());

    assertThat(first.runBackgroundWork()).isTrue();
    assertThat(second.runBackgroundWork()).as("the first holds the lease").isFalse();
    assertThat(first.runBackgroundWork()).as("the holder renews it").isTrue();
  }

  private void markOperation(String id, SandboxOperation.Kind kind, String replica) {
    markOperation(id, Optional.of(new SandboxOperation(kind, replica)));
  }

  private void markOperation(String id, Optional<SandboxOperation> operation) {
    store.update(store.find(id).orElseThrow().withOperation(operation));
  }

  // Restart recovery

  @Test
  void restartAdoptsLiveSandboxesAndMarksVanishedOnesMissing() {
    Started live = startRunning(ALICE);
    Started vanished = startRunning(ALICE);
    backend.destroy(store.find(vanished.id()).orElseThrow().runtime().orElseThrow());

    ControlPlaneSandboxService restarted = restart();

    SandboxInfo adopted = restarted.get(ALICE, live.id()).orElseThrow();
    assertThat(adopted.status()).isEqualTo(SandboxStatus.RUNNING);
    assertThat(restarted.getBySessionKey(live.key())).isPresent();
    assertThat(execute(adopted.agentServerUrl().orElseThrow(), Optional.of(live.key()), "true"))
        .isEqualTo(200);
    SandboxInfo missing = restarted.get(ALICE, vanished.id()).orElseThrow();
    assertThat(missing.status()).isEqualTo(SandboxStatus.MISSING);
    assertThat(missing.statusDetail().orElseThrow()).endsWith("(reference: " + vanished.id() + ")");
    assertThat(restarted.getBySessionKey(vanished.key())).isEmpty();
    assertThat(store.find(vanished.id()).orElseThrow().sessionKeyHash()).isEmpty();

    // The admin key is derived again, not remembered: the new control plane still rotates keys.
    restarted.pause(ALICE, live.id());
    SandboxInfo resumed = restarted.resume(ALICE, live.id()).orElseThrow();
    assertThat(execute(resumed.agentServerUrl().orElseThrow(), Optional.of(live.key()), "true"))
        .isEqualTo(401);
  }

  @Test
  void reconcileReapsRuntimesNoSandboxKnows() {
    String digest = KeyDigest.sha256Hex("orphan-key");
    backend.start(
        new RuntimeRequest("orphan-1", runnableSpec(), Map.of(), List.of(digest), digest));

    ReconcileReport report = service.reconcile();

    assertThat(report.reaped()).containsExactly("orphan-1");
    assertThat(backend.list()).extracting(RuntimeHandle::sandboxId).doesNotContain("orphan-1");
  }

  @Test
  void restartFailsStartsThatDiedWithTheOldControlPlane() {
    Instant longAgo = clock.instant().minus(READY.multipliedBy(2));
    store.insert(
        new SandboxRecord(
            "died-starting",
            ALICE.userId(),
            runnableSpec().id(),
            SandboxStatus.STARTING,
            Optional.of(KeyDigest.sha256Hex("lost-key")),
            Optional.empty(),
            Optional.empty(),
            longAgo,
            longAgo,
            0));

    ControlPlaneSandboxService restarted = restart();

    SandboxInfo failed = restarted.get(ALICE, "died-starting").orElseThrow();
    assertThat(failed.status()).isEqualTo(SandboxStatus.ERROR);
    assertThat(failed.statusDetail())
        .contains(StartFailures.detail(StartFailures.INTERRUPTED, "died-starting"));
    assertThat(store.find("died-starting").orElseThrow().sessionKeyHash()).isEmpty();
  }

  @Test
  void restartFailsAStartThatDiedWithTheOldControlPlaneAtOnceNotAfterTheStartTimeout() {
    Instant now = clock.instant();
    store.insert(
        new SandboxRecord(
            "died-just-now",
            ALICE.userId(),
            runnableSpec().id(),
            SandboxStatus.STARTING,
            Optional.of(KeyDigest.sha256Hex("lost-key")),
            Optional.empty(),
            Optional.empty(),
            now,
            now,
            0));

    ControlPlaneSandboxService restarted = restart();

    SandboxInfo failed = restarted.get(ALICE, "died-just-now").orElseThrow();
    assertThat(failed.status()).isEqualTo(SandboxStatus.ERROR);
    assertThat(failed.statusDetail())
        .contains(StartFailures.detail(StartFailures.INTERRUPTED, "died-just-now"));
  }

  @Test
  void aDeleteCutShortByARestartIsFinishedByTheNextReconcile() {
    SandboxInfo started = service.start(ALICE, StartRequest.builder().build());
    service.waitUntilRunning(ALICE, started.id(), READY);
    // What a control plane that died in the middle of the delete leaves: the record marked.
    SandboxRecord marked = store.find(started.id()).orElseThrow();
    store.update(
        marked
            .withSessionKeyHash(Optional.empty())
            .withStatus(
                SandboxStatus.ERROR,
                Optional.of(StartFailures.detail(StartFailures.DELETING, started.id()))));

    ControlPlaneSandboxService restarted = restart();

    assertThat(restarted.get(ALICE, started.id())).isEmpty();
    assertThat(backend.list()).extracting(RuntimeHandle::sandboxId).doesNotContain(started.id());
  }
}
