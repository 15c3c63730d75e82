package dev.paddock.controlplane;

import dev.paddock.api.Caller;
import dev.paddock.api.KeyDigest;
import dev.paddock.api.Page;
import dev.paddock.api.PageRequest;
import dev.paddock.api.QueuePlace;
import dev.paddock.api.SandboxException;
import dev.paddock.api.SandboxFilter;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxService;
import dev.paddock.api.SandboxSpecService;
import dev.paddock.api.SandboxStartException;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.StartRequest;
import dev.paddock.api.WorkspaceArchives;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.backend.kit.protocol.HttpAgents;
import dev.paddock.store.SandboxRecord;
import dev.paddock.store.SandboxStore;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one {@link SandboxService}, whatever backend runs the sandboxes: session keys, owners,
 * capacity, start failures and restart recovery are decided here, identically for every backend,
 * over a {@link SandboxStore} (what survives a restart) and a {@link SandboxBackend} (what makes
 * runtimes real).
 *
 * <p>Create with {@link #create}, which also {@linkplain #reconcile() reconciles} the store with
 * the backend's runtimes. {@link #start} returns at once with the sandbox STARTING; a virtual
 * thread per start asks the backend for the runtime. The service does not own the store or the
 * backend: closing it waits for starts under way and releases its HTTP client, nothing more.
 * Thread-safe; see docs/CONCURRENCY.md for its threads and locks.
 */
public final class ControlPlaneSandboxService implements SandboxService, AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(ControlPlaneSandboxService.class);
  private static final String TOO_SLOW = "The sandbox did not become ready in time.";

  private final SandboxStore store;
  private final ControlPlaneConfig config;
  private final HttpAgents agents;
  private final SandboxLifecycle lifecycle;
  private final SandboxViews views;
  private final Reconciler reconciler;
  private final Lifetimes lifetimes;
  private final Optional<WorkspaceArchiver> archiver;
  private final StoredArchives archives;
  private final LifecycleLog log;
  private final Replica replica;
  private final UsageReader usage;

  private ControlPlaneSandboxService(
      SandboxStore store,
      SandboxBackend backend,
      SandboxSpecService specs,
      ControlPlaneConfig given) {
    this.store = store;
    this.log = new LifecycleLog(store, given.events());
    this.config = given.withEvents(log);
    this.agents = HttpAgents.create(config.agentAdminTimeout());
    SandboxPermits permits = new SandboxPermits();
    this.archiver =
        config.archives().enabled()
            ? Optional.of(
                new WorkspaceArchiver(
                    config.archives(), config.archiveStore().orElseThrow(), config.clock()))
            : Optional.empty();
    this.archives = new StoredArchives(config.archiveStore(), config.archives().prefix());
    this.lifecycle = new SandboxLifecycle(store, backend, specs, config, agents, permits, archiver);
    this.views = lifecycle.views();
    this.replica = Replica.join(store, config);
    this.reconciler =
        new Reconciler(
            lifecycle.context(),
            replica,
            new Takeover(lifecycle.context(), lifecycle.capture()),
            lifecycle::finishDelete);
    this.lifetimes = new Lifetimes(store, config, lifecycle);
    this.usage = new UsageReader(store, backend);
  }

  /**
   * A service over {@code store} and {@code backend}, reconciled once before it is returned when
   * this replica gets the background lease (see {@link #runBackgroundWork()}). It joins the
   * replicas of the store: its heartbeat runs until {@link #close()}.
   *
   * @param specs the specs sandboxes are made from (usually the backend's, see {@link
   *     ConfiguredSpecService}); a spec's {@code initialEnv} becomes the runtime's environment
   */
  public static ControlPlaneSandboxService create(
      SandboxStore store,
      SandboxBackend backend,
      SandboxSpecService specs,
      ControlPlaneConfig config) {
    ControlPlaneSandboxService service =
        new ControlPlaneSandboxService(
            Objects.requireNonNull(store, "store"),
            Objects.requireNonNull(backend, "backend"),
            Objects.requireNonNull(specs, "specs"),
            Objects.requireNonNull(config, "config"));
    if (service.replica.lead()) {
      ReconcileReport report = service.reconcile();
      LOG.debug("reconciled at start: {}", report);
    }
    return service;
  }

  /**
   * Corrects every stored sandbox from its runtime and reaps runtimes with no stored sandbox: a
   * live runtime is adopted (status follows it; a key stays valid only if RUNNING), a vanished one
   * becomes MISSING with its key revoked, a sandbox left STARTING without a runtime for longer than
   * the start timeout becomes ERROR. Safe to call at any time.
   */
  public ReconcileReport reconcile() {
    try {
      return reconciler.run();
    } finally {
      lifecycle.queue().signal(); // sandboxes found gone free their slots
    }
  }

  /**
   * One pass of the background work, on one replica at a time: when this replica holds (or can
   * take) the store's background lease, {@linkplain #reconcile() reconciles} (which also takes over
   * operations that dead replicas left unfinished), then {@linkplain #enforceLifetimes() enforces
   * lifetimes}. The lease is renewed with this replica's heartbeat while it holds it and lapses one
   * {@link ControlPlaneConfig#replicaLease()} after this replica dies. {@code paddock server} calls
   * this every {@code PADDOCK_RECONCILE_SECONDS}.
   *
   * @return true when this replica did the work, false when another replica holds the lease
   */
  public boolean runBackgroundWork() {
    if (!replica.lead()) {
      return false;
    }
    try {
      ReconcileReport report = reconcile();
      LOG.debug("background reconcile: {}", report);
    } finally {
      enforceLifetimes();
    }
    return true;
  }

  /** This control plane's replica id (in the store's heartbeats, leases and operations). */
  public String replicaId() {
    return replica.id();
  }

  /**
   * Pauses or deletes (archiving first when archives are on) every sandbox whose {@code timeoutAt}
   * passed or that stayed idle for its idle timeout, as its {@code onTimeout}/{@code onIdle} says,
   * telling {@link SandboxEvents#lifetimeEnded}. Each firing is claimed in the store, so several
   * control planes calling this act once per sandbox. Safe to call at any time; {@code paddock
   * server} calls it with every reconcile.
   *
   * @return the ids of the sandboxes it paused or deleted
   */
  public List<String> enforceLifetimes() {
    try {
      return lifetimes.enforce();
    } finally {
      lifecycle.queue().signal(); // slots freed by pauses and deletes go to the queue
    }
  }

  @Override
  public Page<SandboxInfo> search(Caller caller, SandboxFilter filter, PageRequest page) {
    if (!caller.admin() && caller.userId().isEmpty()) {
      return new Page<>(List.of(), Optional.empty());
    }
    Optional<String> owner = caller.admin() ? Optional.empty() : caller.userId();
    Page<SandboxRecord> records = store.page(owner, filter, page);
    return new Page<>(shown(records.items()), records.nextPageId());
  }

  @Override
  public Optional<SandboxInfo> get(Caller caller, String sandboxId) {
    return visible(caller, sandboxId).map(r -> shown(List.of(r)).getFirst());
  }

  @Override
  public List<Optional<SandboxInfo>> batchGet(Caller caller, List<String> sandboxIds) {
    return sandboxIds.stream().map(id -> get(caller, id)).toList();
  }

  /** The records as callers see them; a QUEUED one with its place in the start queue. */
  private List<SandboxInfo> shown(List<SandboxRecord> records) {
    List<SandboxInfo> live = records.stream().map(views::live).toList();
    if (live.stream().noneMatch(i -> i.status() == SandboxStatus.QUEUED)) {
      return live;
    }
    Map<String, Optional<QueuePlace>> places = lifecycle.queue().places();
    return live.stream()
        .map(
            i ->
                places
                    .getOrDefault(i.id(), Optional.empty())
                    .filter(p -> i.status() == SandboxStatus.QUEUED)
                    .map(i::withQueue)
                    .orElse(i))
        .toList();
  }

  @Override
  public Optional<SandboxInfo> getBySessionKey(String sessionKey) {
    if (sessionKey.isEmpty()) {
      return Optional.empty();
    }
    return store
        .findBySessionKeyHash(KeyDigest.sha256Hex(sessionKey))
        .filter(r -> r.status() == SandboxStatus.RUNNING)
        .map(views::live)
        .filter(info -> info.status() == SandboxStatus.RUNNING);
  }

  @Override
  public SandboxInfo start(Caller caller, StartRequest request) {
    if (request.queueTimeout().isPresent()) {
      return log.start(caller, request.specId(), () -> lifecycle.queue().start(caller, request));
    }
    return log.start(caller, request.specId(), () -> lifecycle.start(caller, request));
  }

  /**
   * Derives the key again from the master secret and the stored generation, and gives it only when
   * it is the one whose hash is stored: never a revoked key, never to anyone but the owner.
   */
  @Override
  public Optional<String> sessionKey(Caller caller, String sandboxId) {
    return store
        .find(sandboxId)
        .filter(r -> ownedBy(caller, r))
        .filter(r -> r.status() == SandboxStatus.RUNNING && r.sessionKeyHash().isPresent())
        .flatMap(this::currentKey);
  }

  /**
   * The current session key of a RUNNING sandbox, for the control plane's own calls to its agent
   * (the gateway asking which ports it listens on); never for showing to a caller.
   */
  public Optional<String> agentSessionKey(String sandboxId) {
    return store
        .find(sandboxId)
        .filter(r -> r.status() == SandboxStatus.RUNNING && r.sessionKeyHash().isPresent())
        .flatMap(this::currentKey);
  }

  private Optional<String> currentKey(SandboxRecord record) {
    String key = lifecycle.keys().sessionKey(record.id(), record.keyGeneration());
    return KeyDigest.matches(key, record.sessionKeyHash().orElseThrow())
        ? Optional.of(key)
        : Optional.empty();
  }

  @Override
  public Optional<SandboxInfo> setLabels(
      Caller caller, String sandboxId, Map<String, String> labels) {
    Map<String, String> valid = StartPlans.validLabels(labels);
    return change(caller, sandboxId, r -> r.withSettings(r.settings().withLabels(valid)));
  }

  @Override
  public Optional<SandboxInfo> keepAlive(Caller caller, String sandboxId, Duration timeout) {
    Duration valid = lifecycle.plans().validTimeout(timeout);
    return change(caller, sandboxId, r -> extended(r, valid));
  }

  @Override
  public Optional<SandboxInfo> keepAlive(Caller caller, String sandboxId) {
    return visible(caller, sandboxId)
        .flatMap(r -> keepAlive(caller, sandboxId, lifecycle.plans().renewal(r.settings())));
  }

  private SandboxRecord extended(SandboxRecord record, Duration timeout) {
    Instant now = config.clock().instant();
    return record
        .withTimeoutAt(Optional.of(now.plus(timeout)))
        .withLastActivityAt(Optional.of(now));
  }

  private Optional<SandboxInfo> change(
      Caller caller, String sandboxId, java.util.function.UnaryOperator<SandboxRecord> change) {
    if (visible(caller, sandboxId).isEmpty()) {
      return Optional.empty();
    }
    return lifecycle.records().change(sandboxId, change).map(views::live);
  }

  @Override
  public boolean pause(Caller caller, String sandboxId) {
    Optional<SandboxRecord> record = visible(caller, sandboxId);
    return log.around(
        "pause",
        caller,
        sandboxId,
        record,
        () -> {
          try {
            record.ifPresent(r -> lifecycle.pause(sandboxId));
          } finally {
            lifecycle.queue().signal(); // a slot may be free now
          }
          return record.isPresent();
        },
        LifecycleLog::okOrNotFound);
  }

  @Override
  public Optional<SandboxInfo> resume(Caller caller, String sandboxId) {
    Optional<SandboxRecord> record = visible(caller, sandboxId);
    return log.around(
        "resume",
        caller,
        sandboxId,
        record,
        () ->
            record.map(
                r -> ownedBy(caller, r) ? lifecycle.resume(sandboxId) : withoutKey(sandboxId)),
        resumed -> LifecycleLog.okOrNotFound(resumed.isPresent()));
  }

  // An admin may resume another user's sandbox, but its new key goes to the owner only.
  private SandboxInfo withoutKey(String sandboxId) {
    return lifecycle.resume(sandboxId).withoutKey();
  }

  private static boolean ownedBy(Caller caller, SandboxRecord record) {
    return caller.userId().isPresent() && caller.userId().equals(record.ownerUserId());
  }

  @Override
  public boolean delete(Caller caller, String sandboxId) {
    Optional<SandboxRecord> record = visible(caller, sandboxId);
    return log.around(
        "delete",
        caller,
        sandboxId,
        record,
        () -> {
          try {
            record.ifPresent(r -> deleteQueuedOrStarted(sandboxId));
          } finally {
            lifecycle.queue().signal(); // a slot may be free now
          }
          return record.isPresent();
        },
        LifecycleLog::okOrNotFound);
  }

  // A QUEUED sandbox has no runtime or workspace: it only leaves the queue (and its create fails).
  private void deleteQueuedOrStarted(String sandboxId) {
    if (!lifecycle.queue().cancel(sandboxId)) {
      lifecycle.delete(sandboxId);
    }
  }

  /**
   * Waits for the start (or resume) under way in this control plane to end, without polling, then
   * confirms with the backend that the agent answers. A sandbox starting elsewhere (another
   * replica) is followed by re-reading with growing intervals.
   */
  @Override
  public SandboxInfo waitUntilRunning(Caller caller, String sandboxId, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    visible(caller, sandboxId).orElseThrow(() -> LifecycleErrors.notFound(sandboxId));
    lifecycle.inFlight(sandboxId).ifPresent(f -> await(f, sandboxId, deadline));
    long backoffNanos = TimeUnit.MILLISECONDS.toNanos(20);
    while (true) {
      SandboxInfo info = get(caller, sandboxId).orElseThrow(() -> gone(sandboxId));
      switch (info.status()) {
        case RUNNING -> {
          return info;
        }
        case ERROR ->
            throw new SandboxStartException(
                StartFailures.safeMessage(info.statusDetail(), sandboxId),
                sandboxId,
                StartFailures.unreachable(info.statusDetail(), sandboxId));
        case PAUSED, MISSING ->
            throw new SandboxException(
                "sandbox " + sandboxId + " is " + info.status() + ", not starting",
                Optional.of(sandboxId));
        case QUEUED, STARTING -> {
          long left = deadline - System.nanoTime();
          if (left <= 0) {
            throw new SandboxStartException(TOO_SLOW, sandboxId);
          }
          LockSupport.parkNanos(Math.min(backoffNanos, left));
          backoffNanos = Math.min(backoffNanos * 2, TimeUnit.MILLISECONDS.toNanos(500));
          if (Thread.interrupted()) {
            Thread.currentThread().interrupt();
            throw new SandboxException(
                "interrupted while waiting for sandbox " + sandboxId, Optional.of(sandboxId));
          }
        }
      }
    }
  }

  private static void await(CompletableFuture<Void> done, String sandboxId, long deadline) {
    try {
      done.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      throw new SandboxStartException(TOO_SLOW, sandboxId);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SandboxException(
          "interrupted while waiting for sandbox " + sandboxId, Optional.of(sandboxId), e);
    } catch (ExecutionException e) {
      throw new IllegalStateException("start tasks complete normally", e);
    }
  }

  private static SandboxException gone(String sandboxId) {
    return new SandboxException(
        "sandbox " + sandboxId + " was deleted while starting", Optional.of(sandboxId));
  }

  /**
   * Archives the workspace of a RUNNING sandbox the caller may see into the archive store, as a
   * delete does first; true when archiving is off or the sandbox is not visible.
   */
  @Override
  public boolean archiveWorkspace(
      Caller caller, String sandboxId, Optional<String> conversationId) {
    Optional<SandboxRecord> record = visible(caller, sandboxId);
    if (record.isEmpty()) {
      return true;
    }
    return log.around(
        "archive",
        caller,
        sandboxId,
        record,
        () -> lifecycle.archive(sandboxId, conversationId),
        archived -> archived ? "ok" : "not_archived");
  }

  /** The resource use of running sandboxes, read from their runtimes, owner-scoped. */
  public dev.paddock.api.SandboxUsage usage() {
    return usage;
  }

  /** The stored archives, owner-scoped, also of deleted sandboxes. */
  public WorkspaceArchives archives() {
    return archives;
  }

  private Optional<SandboxRecord> visible(Caller caller, String sandboxId) {
    return store.find(sandboxId).filter(r -> caller.mayAccess(r.ownerUserId()));
  }

  /**
   * Waits up to the start timeout for starts and resumes under way to end (their runtimes are then
   * recorded, not leaked), then retires this replica (its heartbeat stops and its background lease
   * is released, so another replica leads at once) and closes the agent admin client. Store and
   * backend stay open.
   */
  @Override
  public void close() {
    lifecycle.queue().close(); // creates waiting for a slot are told so, before starts are awaited
    CompletableFuture<?>[] pending = lifecycle.allInFlight().toArray(CompletableFuture[]::new);
    try {
      CompletableFuture.allOf(pending).get(config.startTimeout().toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException | ExecutionException e) {
      LOG.warn("closing with {} sandbox start(s) still under way", pending.length);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      lifecycle.close();
      replica.close();
      agents.close();
      archiver.ifPresent(WorkspaceArchiver::close);
    }
  }
}
