package dev.paddock.backend.process.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.paddock.api.Caller;
import dev.paddock.api.CapacityExceededException;
import dev.paddock.api.InvalidRequestException;
import dev.paddock.api.PageRequest;
import dev.paddock.api.SandboxException;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.StartRequest;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.backend.process.ProcessBackendProvider;
import dev.paddock.controlplane.ConfiguredSpecService;
import dev.paddock.controlplane.ControlPlaneConfig;
import dev.paddock.controlplane.ControlPlaneSandboxService;
import dev.paddock.controlplane.ForwardedEnvironment;
import dev.paddock.controlplane.QueueSettings;
import dev.paddock.store.QueueEntry;
import dev.paddock.store.SandboxRecord;
import dev.paddock.store.SandboxStore;
import dev.paddock.store.SandboxStores;
import dev.paddock.store.TestDatabase;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The start queue (issue 13 point 7) with the real process backend and the real SQLite store: one
 * slot on the control plane, creates that ask to wait for it.
 */
class ProcessStartQueueTest {
  private static final Caller ALICE = Caller.user("alice");
  private static final Caller BOB = Caller.user("bob");
  private static final Caller ADMIN = Caller.admin("admin");
  private static final String SECRET = "queue-test-master-secret-0123456789abcdef";
  private static final Duration READY = Duration.ofSeconds(60);
  private static final Duration LONG_WAIT = Duration.ofSeconds(120);

  private final ProcessLeaks leaks = new ProcessLeaks();
  private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();
  private final List<SandboxBackend> backends = new ArrayList<>();
  private final List<ControlPlaneSandboxService> services = new ArrayList<>();
  private TestDatabase database;
  private SandboxStore store;
  private ControlPlaneSandboxService service;

  @BeforeEach
  void openControlPlane() {
    database = TestDatabase.sqlite();
    store = SandboxStores.open(database.url(), database.user(), database.password());
    service = newService();
  }

  @AfterEach
  void closeAndCheckLeaks() throws Exception {
    try {
      for (SandboxInfo s : service.search(ADMIN, new PageRequest(Optional.empty(), 100)).items()) {
        service.delete(ADMIN, s.id());
      }
      threads.shutdown();
      services.forEach(ControlPlaneSandboxService::close);
      backends.forEach(SandboxBackend::close);
      store.close();
      threads.close();
    } finally {
      database.close();
    }
    leaks.assertNothingLeaked();
  }

  private ControlPlaneSandboxService newService() {
    SandboxBackend backend =
        new ProcessBackendProvider()
            .create(
                Map.of(
                    "paddock.data-dir", leaks.dataDir().toString(),
                    "agent.command", ProcessBackendProvider.classPathAgentCommand(),
                    "process.stop-grace", "3s"));
    backends.add(backend);
    ControlPlaneConfig config =
        ControlPlaneConfig.builder(SECRET)
            .maxSandboxes(1)
            .startTimeout(READY)
            .queue(new QueueSettings(100, Duration.ofMinutes(5), Duration.ofSeconds(2)))
            .build();
    ControlPlaneSandboxService created =
        ControlPlaneSandboxService.create(
            store,
            backend,
            ConfiguredSpecService.of(
                List.of(SandboxSpec.builder("process-default").build()),
                ForwardedEnvironment.none()),
            config);
    services.add(created);
    return created;
  }

  private static StartRequest queued(String id, Duration timeout) {
    return StartRequest.builder().sandboxId(id).queueTimeout(timeout).build();
  }

  /** Starts {@code id} with a queue timeout on its own thread; completes when admitted. */
  private CompletableFuture<SandboxInfo> createInQueue(Caller caller, String id) {
    return CompletableFuture.supplyAsync(
        () -> service.start(caller, queued(id, LONG_WAIT)), threads);
  }

  private void awaitQueued(Caller caller, String id) {
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                service.get(caller, id).map(s -> s.status() == SandboxStatus.QUEUED).orElse(false));
  }

  private SandboxInfo occupyTheSlot(Caller caller, String id) {
    service.start(caller, StartRequest.builder().sandboxId(id).build());
    return service.waitUntilRunning(caller, id, READY);
  }

  @Test
  void burstOfOneUserDoesNotStarveAnother() {
    occupyTheSlot(ALICE, "alice-0");
    CompletableFuture<SandboxInfo> alice1 = createInQueue(ALICE, "alice-1");
    awaitQueued(ALICE, "alice-1");
    CompletableFuture<SandboxInfo> alice2 = createInQueue(ALICE, "alice-2");
    awaitQueued(ALICE, "alice-2");
    CompletableFuture<SandboxInfo> alice3 = createInQueue(ALICE, "alice-3");
    awaitQueued(ALICE, "alice-3");
    CompletableFuture<SandboxInfo> bob1 = createInQueue(BOB, "bob-1");
    awaitQueued(BOB, "bob-1");

    // Round-robin across users: Bob's first create comes right after Alice's first.
    SandboxInfo bobQueued = service.get(BOB, "bob-1").orElseThrow();
    assertThat(bobQueued.queue()).hasValueSatisfying(p -> assertThat(p.position()).isEqualTo(2));
    assertThat(bobQueued.queue().get().length()).isEqualTo(4);
    assertThat(service.get(ALICE, "alice-3").orElseThrow().queue().orElseThrow().position())
        .isEqualTo(4);

    service.delete(ALICE, "alice-0");
    assertThat(alice1.join().status()).isEqualTo(SandboxStatus.STARTING);
    assertThat(List.of(bob1, alice2, alice3)).noneMatch(CompletableFuture::isDone);
    assertThat(store.find("bob-1").orElseThrow().status()).isEqualTo(SandboxStatus.QUEUED);

    service.waitUntilRunning(ALICE, "alice-1", READY);
    service.delete(ALICE, "alice-1");
    assertThat(bob1.join().status()).isEqualTo(SandboxStatus.STARTING);
    assertThat(service.waitUntilRunning(BOB, "bob-1", READY).status())
        .isEqualTo(SandboxStatus.RUNNING);
    assertThat(List.of(alice2, alice3)).noneMatch(CompletableFuture::isDone);
    assertThat(service.get(ALICE, "alice-2").orElseThrow().queue().orElseThrow().position())
        .isEqualTo(1);
  }

  @Test
  void slotFreedByDeleteAdmitsTheHeadOfTheQueue() {
    occupyTheSlot(ALICE, "first");
    CompletableFuture<SandboxInfo> waiting = createInQueue(BOB, "second");
    awaitQueued(BOB, "second");
    assertThat(service.get(BOB, "second").orElseThrow().queue().orElseThrow().position())
        .isEqualTo(1);

    service.delete(ALICE, "first");

    SandboxInfo admitted = waiting.join();
    assertThat(admitted.sessionApiKey()).isPresent();
    assertThat(service.waitUntilRunning(BOB, "second", READY).status())
        .isEqualTo(SandboxStatus.RUNNING);
    assertThat(store.queue()).isEmpty();
  }

  @Test
  void createGivesUpWithAtCapacityAfterItsQueueTimeoutAndLeavesNothing() {
    occupyTheSlot(ALICE, "holder");

    assertThatThrownBy(() -> service.start(BOB, queued("too-late", Duration.ofSeconds(1))))
        .isInstanceOf(CapacityExceededException.class)
        .hasMessageContaining("waited 1 s in the start queue")
        .hasMessageContaining("position 1 of 1")
        .hasMessageContaining("too-late was not created");
    assertThat(store.find("too-late")).isEmpty();
    assertThat(store.queue()).isEmpty();
  }

  @Test
  void deletingQueuedSandboxRemovesItFromTheQueueAndFailsItsCreate() {
    occupyTheSlot(ALICE, "holder");
    CompletableFuture<SandboxInfo> waiting = createInQueue(BOB, "unwanted");
    awaitQueued(BOB, "unwanted");

    assertThat(service.delete(BOB, "unwanted")).isTrue();

    assertThat(waiting)
        .failsWithin(Duration.ofSeconds(30))
        .withThrowableThat()
        .havingCause()
        .isInstanceOf(SandboxException.class)
        .withMessageContaining("deleted while it waited in the start queue");
    assertThat(store.find("unwanted")).isEmpty();
    assertThat(store.queue()).isEmpty();
    assertThat(backends.getFirst().list()).extracting(h -> h.sandboxId()).containsOnly("holder");
  }

  @Test
  void closingTheControlPlaneTellsWaitingCreatesAndLeavesNoQueuedRecord() {
    occupyTheSlot(ALICE, "holder");
    CompletableFuture<SandboxInfo> waiting = createInQueue(BOB, "interrupted");
    awaitQueued(BOB, "interrupted");

    service.close();

    assertThat(waiting)
        .failsWithin(Duration.ofSeconds(30))
        .withThrowableThat()
        .havingCause()
        .isInstanceOf(SandboxException.class)
        .withMessageContaining("shutting down")
        .withMessageContaining("nothing was created");
    assertThat(store.find("interrupted")).isEmpty();
    assertThat(store.queue()).isEmpty();
    service = newService();
  }

  @Test
  void restartFailsCreatesLeftQueuedByAControlPlaneThatStoppedClearly() {
    service.close();
    // What a control plane killed while a create waited leaves: the QUEUED record and its entry,
    // whose lease nobody renews any more.
    Instant then = Instant.now().minusSeconds(30);
    store.enqueue(
        new QueueEntry(
            "orphan",
            Optional.of("bob"),
            0,
            then,
            then.plusSeconds(600),
            "cp-gone",
            then.plusMillis(1)));
    store.insert(
        new SandboxRecord(
            "orphan",
            Optional.of("bob"),
            "process-default",
            SandboxStatus.QUEUED,
            Optional.empty(),
            Optional.empty(),
            Optional.of("waiting in the start queue for a free slot"),
            then,
            then,
            0));

    service = newService();

    SandboxInfo failed = service.get(BOB, "orphan").orElseThrow();
    assertThat(failed.status()).isEqualTo(SandboxStatus.ERROR);
    assertThat(failed.statusDetail())
        .hasValueSatisfying(
            d ->
                assertThat(d)
                    .contains("stopped (restart or crash) before a slot came free")
                    .contains("create it again"));
    assertThat(store.queue()).isEmpty();
  }

  @Test
  void aQueueTimeoutOutOfBoundsIsRefusedBeforeAnythingIsQueued() {
    occupyTheSlot(ALICE, "holder");

    assertThatThrownBy(() -> service.start(BOB, queued("negative", Duration.ofSeconds(-5))))
        .isInstanceOf(InvalidRequestException.class)
        .hasMessageContaining("queue_timeout must be a positive number of seconds");
    assertThatThrownBy(() -> service.start(BOB, queued("huge", Duration.ofDays(2))))
        .isInstanceOf(InvalidRequestException.class)
        .hasMessageContaining("longer than the operator allows (300 s, PADDOCK_QUEUE_MAX_TIMEOUT)");
    assertThat(store.find("negative")).isEmpty();
    assertThat(store.find("huge")).isEmpty();
    assertThat(store.queue()).isEmpty();
  }
}
