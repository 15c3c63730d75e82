package dev.paddock.controlplane.inprocess;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.paddock.api.ArchiveStore;
import dev.paddock.api.Resources;
import dev.paddock.api.SandboxException;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxStartException;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.StartRequest;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeRequest;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.controlplane.ArchiveSettings;
import dev.paddock.controlplane.ArchiveStores;
import dev.paddock.controlplane.ChildProcesses;
import dev.paddock.controlplane.ControlPlaneConfig;
import dev.paddock.controlplane.FileTrees;
import dev.paddock.controlplane.InProcessBackend;
import dev.paddock.controlplane.InProcessHost;
import dev.paddock.controlplane.ReconcileReport;
import dev.paddock.controlplane.SandboxServiceContract;
import dev.paddock.store.SandboxOperation;
import dev.paddock.store.SandboxRecord;
import dev.paddock.store.SandboxStore;
import dev.paddock.store.SandboxStores;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/**
 * The contract suite against the test stand-ins (real agent-servers in this JVM) and the real
 * embedded SQLite store, plus what only these stand-ins can provoke: a teardown that fails, a start
 * held open. Lives outside the control plane's package, as every backend's subclass will. {@link
 * InProcessPostgresContractTest} runs the same on PostgreSQL.
 */
class InProcessContractTest extends SandboxServiceContract {
  // Both made by the set-up, not with the instance: a run skipped in set-up (no PostgreSQL) never
  // reaches the leak check that removes them, and must not leave them in the temp dir.
  private InProcessHost host;
  private Path dataDir;

  @Override
  protected SandboxBackend newBackend() {
    if (host == null) {
      host = new InProcessHost();
    }
    return new InProcessBackend(host);
  }

  @Override
  protected SandboxStore newStore() {
    try {
      dataDir = Files.createTempDirectory("paddock-inprocess-contract-");
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    try {
      return crashable(openStore(dataDir));
    } catch (RuntimeException e) { // a skipped PostgreSQL run throws its assumption failure here
      FileTrees.delete(dataDir);
      throw e;
    }
  }

  /** The store the control plane runs on: the embedded SQLite default in {@code dataDir}. */
  SandboxStore openStore(Path dataDir) {
    return SandboxStores.openEmbedded(dataDir);
  }

  /** Armed: the control plane dies right after the write that revokes a RUNNING sandbox's key. */
  private final AtomicBoolean dieAfterRevoke = new AtomicBoolean();

  /** Set once it died: every later write of that control plane fails, as it never happens. */
  private final AtomicBoolean dead = new AtomicBoolean();

  /**
   * The store as a control plane that can die between two writes sees it: the crash point is a
   * write's outcome, not a moment, so it is hit every time.
   */
  private SandboxStore crashable(SandboxStore store) {
    InvocationHandler handler =
        (proxy, method, args) -> {
          boolean write = Set.of("insert", "update", "delete").contains(method.getName());
          if (write && dead.get()) {
            throw new IllegalStateException("the control plane died before this write");
          }
          Object result = invoke(store, method, args);
          if (dieAfterRevoke.get()
              && result instanceof SandboxRecord r
              && r.status() == SandboxStatus.RUNNING
              && r.sessionKeyHash().isEmpty()) {
            dead.set(true);
          }
          return result;
        };
    return (SandboxStore)
        Proxy.newProxyInstance(
            SandboxStore.class.getClassLoader(), new Class<?>[] {SandboxStore.class}, handler);
  }

  private static Object invoke(SandboxStore store, Method method, Object[] args) throws Throwable {
    try {
      return method.invoke(store, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  /**
   * A crash between a delete's first write (the key revoked in the store) and its next must not
   * leave a RUNNING sandbox whose key is revoked in the store while its agent still takes it: the
   * restarted control plane finishes the delete.
   */
  @Test
  void aDeleteCutShortRightAfterItRevokedTheKeyIsFinishedByTheRestart() {
    Started sandbox = startRunning(ALICE);
    dieAfterRevoke.set(true);

    assertThatThrownBy(() -> service().delete(ALICE, sandbox.id()))
        .hasStackTraceContaining("the control plane died");
    dieAfterRevoke.set(false);
    dead.set(false); // the next control plane's writes go through
    restart().reconcile();

    assertThat(store().find(sandbox.id())).as("the record of the deleted sandbox").isEmpty();
    assertThat(execute(sandbox.url(), Optional.of(sandbox.key()), "true"))
        .as("its agent, with the key the delete revoked")
        .isNotEqualTo(200);
  }

  @Override
  protected SandboxSpec runnableSpec() {
    return SandboxSpec.builder("agent").build();
  }

  @Override
  protected SandboxSpec failingSpec() {
    return SandboxSpec.builder("broken").command(InProcessBackend.FAIL).build();
  }

  @Override
  protected List<SandboxSpec> extraSpecs() {
    return List.of(SandboxSpec.builder("held").command(InProcessBackend.HOLD).build());
  }

  // Pause stops the in-JVM agent and its commands die with it (see InProcessBackend).
  @Override
  protected boolean pauseKeepsProcesses() {
    return false;
  }

  // The agents run in this JVM and share its environment.
  @Override
  protected boolean backendAppliesEnv() {
    return false;
  }

  @Test
  void theBackendGetsTheEffectiveSpec() {
    SandboxInfo started =
        service()
            .start(
                ALICE,
                StartRequest.builder()
                    .image("agent")
                    .env(Map.of("TEAM_NAME", "ml"))
                    .resources(
                        new Resources(
                            OptionalDouble.of(0.5),
                            OptionalLong.of(256L << 20),
                            OptionalInt.empty(),
                            OptionalLong.empty()))
                    .workingDir("/workspace/project")
                    .build());
    service().waitUntilRunning(ALICE, started.id(), READY);

    RuntimeRequest request = host.requests().get(started.id());
    assertThat(request.spec().imageReference()).isEqualTo("agent");
    assertThat(request.spec().initialEnv()).containsEntry("TEAM_NAME", "ml");
    assertThat(request.env()).containsEntry("TEAM_NAME", "ml");
    assertThat(request.spec().resources().cpus()).hasValue(0.5);
    assertThat(request.spec().resources().memoryBytes()).hasValue(256L << 20);
    assertThat(request.spec().workingDir()).isEqualTo("/workspace/project");
    assertThat(service().get(ALICE, started.id()).orElseThrow().settings().workingDir())
        .contains("/workspace/project");
  }

  @Test
  void reconcileReadsTheListingAndInspectsOnlyWhereARecordDisagrees() {
    Started first = startRunning(ALICE);
    startRunning(ALICE);
    startRunning(BOB);
    InProcessBackend backend = (InProcessBackend) backend();
    // Paused behind the control plane's back: its record still says RUNNING.
    RuntimeHandle paused =
        backend.list().stream()
            .filter(h -> h.sandboxId().equals(first.info().id()))
            .findFirst()
            .orElseThrow();
    backend.pause(paused);
    int before = backend.inspections();

    ReconcileReport report = service().reconcile();

    assertThat(report.adopted()).hasSize(3);
    assertThat(backend.inspections() - before).isEqualTo(1);
    assertThat(service().get(ALICE, first.info().id()).orElseThrow().status())
        .isEqualTo(SandboxStatus.PAUSED);
  }

  // The engine going away in the middle of a reconcile pass (the listing answered, the inspects
  // did not; issue 15's dockerd restart): nothing can be said of the runtimes, so nothing changes.
  // It used to adopt the "engine unreachable" answer as the sandbox's state: ERROR, key revoked.
  @Test
  void aReconcilePassThatCannotReachTheEngineChangesNoRecordAndRevokesNoKey() {
    Started sandbox = startRunning(ALICE);
    InProcessBackend backend = (InProcessBackend) backend();
    backend.engineAway(true);
    try {
      service().reconcile();
    } finally {
      backend.engineAway(false);
    }

    SandboxRecord record = store().find(sandbox.id()).orElseThrow();
    assertThat(record.status()).isEqualTo(SandboxStatus.RUNNING);
    assertThat(record.sessionKeyHash()).isPresent();
    assertThat(execute(sandbox.url(), Optional.of(sandbox.key()), "true")).isEqualTo(200);
  }

  // An archived delete cut short by a crash (issue 15's crash cycles found it): the delete had
  // claimed the sandbox and was archiving its workspace; the takeover used to finish the delete
  // without the archive, so a required archive was lost with the sandbox.

  @Test
  void anArchivedDeleteCutShortWhileArchivingIsArchivedBeforeTheTakeoverFinishesIt()
      throws Exception {
    Path archiveDir = Files.createTempDirectory("paddock-takeover-archives-");
    try (ArchiveStore archives = ArchiveStores.directory(archiveDir)) {
      service(archiving(archives));
      Started sandbox = startRunning(ALICE);
      assertThat(execute(sandbox.url(), Optional.of(sandbox.key()), "echo kept > kept.txt"))
          .isEqualTo(200);
      leftMidDelete(sandbox.id());

      assertThat(service().reconcile().takenOver()).containsExactly(sandbox.id());

      assertThat(store().find(sandbox.id())).isEmpty();
      assertThat(archives.list("ws/" + sandbox.id() + "/")).isNotEmpty();
    } finally {
      service(config()); // the clean-up's deletes archive nothing
      FileTrees.delete(archiveDir);
    }
  }

  @Test
  void anArchivedDeleteCutShortWhoseRequiredArchiveNowFailsKeepsTheSandboxAsItWas() {
    service(archiving(new RefusingStore()));
    Started sandbox = startRunning(ALICE);
    leftMidDelete(sandbox.id());

    assertThat(service().reconcile().takenOver()).containsExactly(sandbox.id());

    SandboxInfo kept = service().get(ALICE, sandbox.id()).orElseThrow();
    assertThat(kept.status()).isEqualTo(SandboxStatus.RUNNING);
    assertThat(store().find(sandbox.id()).orElseThrow().operation()).isEmpty();
    assertThat(execute(kept.agentServerUrl().orElseThrow(), Optional.of(sandbox.key()), "true"))
        .isEqualTo(200);
    service(config()); // the clean-up's deletes would be refused by the store that is down
  }

  private ControlPlaneConfig.Builder archiving(ArchiveStore archives) {
    return config()
        .archives(
            new ArchiveSettings(true, true, ArchiveSettings.TAR_GZ, Duration.ofSeconds(60), "ws"))
        .archiveStore(archives);
  }

  /** What a crash while a delete archives leaves: its claim, by a replica now gone, and no more. */
  private void leftMidDelete(String id) {
    store()
        .update(
            store()
                .find(id)
                .orElseThrow()
                .withOperation(
                    Optional.of(new SandboxOperation(SandboxOperation.Kind.DELETE, "cp-gone"))));
  }

  /** An archive store that is down: every write fails, nothing is ever listed. */
  private static final class RefusingStore implements ArchiveStore {
    @Override
    public void put(String key, Path file) throws IOException {
      throw new IOException("the archive store is down");
    }

    @Override
    public List<String> list(String prefix) {
      return List.of();
    }

    @Override
    public Optional<InputStream> open(String key) {
      return Optional.empty();
    }

    @Override
    public Optional<Long> size(String key) {
      return Optional.empty();
    }
  }

  @Override
  protected void assertNothingLeaked() throws Exception {
    try {
      closeStore();
      assertThat(host.sandboxIds()).as("runtimes left on the host").isEmpty();
      assertThat(host.directoryEmpty()).as("runtime directories left behind").isTrue();
      ChildProcesses.awaitNoneLeft("no process left behind", Duration.ofSeconds(10));
    } finally {
      host.close();
      FileTrees.delete(dataDir);
    }
  }

  /** Releases what {@link #openStore} made beyond the data dir (nothing for SQLite). */
  void closeStore() {}

  @Test
  void startFailureNeverShowsTheRawDetail() {
    SandboxInfo started = service().start(ALICE, Optional.of("broken"), Optional.empty());

    assertThatThrownBy(() -> service().waitUntilRunning(ALICE, started.id(), READY))
        .isInstanceOf(SandboxStartException.class)
        .hasMessage("The sandbox's agent exited while starting. (reference: " + started.id() + ")")
        .hasMessageNotContaining("RAW-SECRET");
    assertThat(service().get(ALICE, started.id()).orElseThrow().statusDetail().orElseThrow())
        .doesNotContain("RAW-SECRET", "/srv/x", "code 3");
  }

  @Test
  void failedTeardownKeepsTheRevocationAndAsksForARetry() {
    Started sandbox = startRunning(ALICE);
    host.failNextDestroy();

    assertThatThrownBy(() -> service().delete(ALICE, sandbox.id()))
        .isInstanceOf(SandboxException.class)
        .hasMessageContaining("try again");

    SandboxInfo failed = service().get(ALICE, sandbox.id()).orElseThrow();
    assertThat(failed.status()).isEqualTo(SandboxStatus.ERROR);
    assertThat(failed.statusDetail().orElseThrow()).endsWith("(reference: " + sandbox.id() + ")");
    assertThat(service().getBySessionKey(sandbox.key())).isEmpty();
    assertThat(store().find(sandbox.id()).orElseThrow().sessionKeyHash()).isEmpty();
    // The agent was told before the teardown failed: the key is refused there too.
    assertThat(execute(sandbox.url(), Optional.of(sandbox.key()), "true")).isEqualTo(401);

    assertThat(service().delete(ALICE, sandbox.id())).isTrue();
    assertThat(service().get(ALICE, sandbox.id())).isEmpty();
  }

  @Test
  void waitUntilRunningGivesUpWithASafeMessageAndLaterSucceeds() {
    SandboxInfo started = service().start(ALICE, Optional.of("held"), Optional.empty());

    assertThatThrownBy(() -> service().waitUntilRunning(ALICE, started.id(), Duration.ofMillis(50)))
        .isInstanceOf(SandboxStartException.class)
        .hasMessage("The sandbox did not become ready in time. (reference: " + started.id() + ")");
    assertThat(service().get(ALICE, started.id()).orElseThrow().status())
        .isEqualTo(SandboxStatus.STARTING);

    host.releaseHeldStarts();
    assertThat(service().waitUntilRunning(ALICE, started.id(), READY).status())
        .isEqualTo(SandboxStatus.RUNNING);
  }

  @Test
  void deleteDuringStartRevokesAtOnceAndRemovesTheRuntimeWhenTheStartEnds() {
    SandboxInfo started = service().start(ALICE, Optional.of("held"), Optional.empty());

    CompletableFuture<Boolean> deleting =
        CompletableFuture.supplyAsync(() -> service().delete(ALICE, started.id()));
    Awaitility.await("the key is revoked before the start ends")
        .atMost(Duration.ofSeconds(10))
        .until(() -> store().find(started.id()).orElseThrow().sessionKeyHash().isEmpty());
    assertThat(deleting).isNotDone();

    host.releaseHeldStarts();
    assertThat(deleting.join()).isTrue();
    assertThat(service().get(ALICE, started.id())).isEmpty();
    assertThat(host.sandboxIds()).isEmpty();
  }
}
