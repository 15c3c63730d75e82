package dev.paddock.controlplane;

import dev.paddock.api.Caller;
import dev.paddock.api.KeyDigest;
import dev.paddock.api.SandboxException;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxSpecService;
import dev.paddock.api.SandboxStartException;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeRequest;
import dev.paddock.api.spi.RuntimeStartException;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.store.ConflictException;
import dev.paddock.store.SandboxRecord;
import dev.paddock.store.SandboxStore;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The state changes of sandboxes: start, pause, resume, delete. Callers have already checked that
 * the caller may see the sandbox. Every change of one sandbox runs under its permit (see {@link
 * SandboxPermits}); key revocations are written before the permit is awaited where the contract
 * says "first".
 */
final class SandboxLifecycle {
  private static final Logger LOG = LoggerFactory.getLogger(SandboxLifecycle.class);
  private static final Pattern ID = Pattern.compile("[a-z0-9][a-z0-9-]{2,62}");
  private static final HexFormat HEX = HexFormat.of();

  private final SandboxStore store;
  private final SandboxBackend backend;
  private final SandboxSpecService specs;
  private final ControlPlaneConfig config;
  private final SessionKeys keys;
  private final AgentAdminClient agents;
  private final SandboxPermits permits;
  private final SandboxRecords records;
  private final SandboxViews views;
  private final Capacity capacity;
  private final Optional<WorkspaceArchiver> archiver;
  private final SecureRandom random = new SecureRandom();

  /** Starts and resumes under way in this control plane, completed when they end either way. */
  private final Map<String, CompletableFuture<Void>> inFlight = new ConcurrentHashMap<>();

  /** Initial snapshots under way (virtual threads; each removes itself when it ends). */
  private final java.util.Set<Thread> snapshots = ConcurrentHashMap.newKeySet();

  SandboxLifecycle(
      SandboxStore store,
      SandboxBackend backend,
      SandboxSpecService specs,
      ControlPlaneConfig config,
      AgentAdminClient agents,
      SandboxPermits permits,
      Optional<WorkspaceArchiver> archiver) {
    this.store = store;
    this.backend = backend;
    this.specs = specs;
    this.config = config;
    this.keys = new SessionKeys(config.masterSecret());
    this.agents = agents;
    this.permits = permits;
    this.records = new SandboxRecords(store);
    this.views = new SandboxViews(backend);
    this.capacity = new Capacity(store, config, this::pauseVictim);
    this.archiver = archiver;
  }

  SandboxViews views() {
    return views;
  }

  SandboxRecords records() {
    return records;
  }

  /** The start or resume of this sandbox under way here, if any. */
  Optional<CompletableFuture<Void>> inFlight(String sandboxId) {
    return Optional.ofNullable(inFlight.get(sandboxId));
  }

  /** Every start and resume under way here. */
  List<CompletableFuture<Void>> allInFlight() {
    return List.copyOf(inFlight.values());
  }

  // Start

  SandboxInfo start(Caller caller, Optional<String> specId, Optional<String> requestedId) {
    SandboxSpec spec = resolveSpec(specId);
    String id = requestedId.map(SandboxLifecycle::validId).orElseGet(this::newId);
    SandboxPermits.Permit permit =
        permits.tryAcquire(id).orElseThrow(() -> idTaken(id)); // someone is changing that id now
    CompletableFuture<Void> done = new CompletableFuture<>();
    String key;
    SandboxRecord record;
    try {
      key = keys.newSessionKey();
      String keyHash = KeyDigest.sha256Hex(key);
      // Registered before the record exists, so a waiter never finds STARTING without a future.
      inFlight.put(id, done);
      record = capacity.admit(caller.userId(), id, () -> insert(id, caller, spec, keyHash));
      Thread.ofVirtual()
          .name("paddock-start-" + id)
          .start(() -> runStart(id, spec, keyHash, permit, done));
    } catch (RuntimeException | Error e) {
      inFlight.remove(id, done);
      done.complete(null);
      permit.close();
      throw e;
    }
    return views.issued(record, List.of(), key);
  }

  private SandboxSpec resolveSpec(Optional<String> specId) {
    if (specId.isEmpty()) {
      return specs.defaultSpec();
    }
    return specs
        .get(specId.get())
        .orElseThrow(
            () ->
                new IllegalArgumentException(
                    "unknown sandbox spec '" + specId.get() + "'; list the specs to pick one"));
  }

  private static String validId(String id) {
    if (!ID.matcher(id).matches()) {
      throw new IllegalArgumentException(
          "malformed sandbox id '"
              + id
              + "': use 3 to 63 lower-case letters, digits and '-', starting with a letter or"
              + " digit");
    }
    return id;
  }

  private String newId() {
    byte[] bytes = new byte[8];
    random.nextBytes(bytes);
    return "sb-" + HEX.formatHex(bytes);
  }

  private static IllegalArgumentException idTaken(String id) {
    return new IllegalArgumentException("sandbox id '" + id + "' is taken; choose another");
  }

  private SandboxRecord insert(String id, Caller caller, SandboxSpec spec, String keyHash) {
    if (store.find(id).isPresent()) {
      throw idTaken(id);
    }
    Instant now = config.clock().instant();
    SandboxRecord record =
        new SandboxRecord(
            id,
            caller.userId(),
            spec.id(),
            SandboxStatus.STARTING,
            Optional.of(keyHash),
            Optional.empty(),
            Optional.empty(),
            now,
            now,
            0);
    try {
      return store.insert(record);
    } catch (ConflictException e) {
      throw idTaken(id);
    }
  }

  /** The start task, on its own virtual thread; holds the sandbox's permit until it ends. */
  private void runStart(
      String id,
      SandboxSpec spec,
      String keyHash,
      SandboxPermits.Permit permit,
      CompletableFuture<Void> done) {
    long began = System.nanoTime();
    try (permit) {
      RuntimeRequest request =
          new RuntimeRequest(id, spec, spec.initialEnv(), List.of(keyHash), adminDigest(id));
      RuntimeHandle handle;
      try {
        handle = backend.start(request);
      } catch (RuntimeStartException e) {
        recordFailure(id, e.failure(), e);
        return;
      } catch (RuntimeException e) {
        recordFailure(id, new RuntimeFailure(RuntimeFailure.Kind.UNKNOWN, e.toString()), e);
        return;
      }
      if (recordStarted(id, handle)) {
        config.events().started(id, Duration.ofNanos(System.nanoTime() - began));
        startInitialSnapshot(id, handle);
      }
    } finally {
      inFlight.remove(id, done);
      done.complete(null);
    }
  }

  /** Stores the started runtime; false when the sandbox could not be recorded as RUNNING. */
  private boolean recordStarted(String id, RuntimeHandle handle) {
    Optional<SandboxRecord> stored;
    try {
      stored =
          records.change(
              id,
              r -> r.withRuntime(Optional.of(handle)).withStatus(SandboxStatus.RUNNING, none()));
    } catch (RuntimeException e) {
      destroyQuietly(handle, e);
      recordFailure(id, new RuntimeFailure(RuntimeFailure.Kind.UNKNOWN, e.toString()), e);
      return false;
    }
    if (stored.isEmpty()) {
      // The record went away while the runtime started (removed from the store directly):
      // nothing refers to the runtime any more, so it must not outlive this task.
      LOG.warn("sandbox {} was removed while starting; destroying its runtime", id);
      destroyQuietly(handle, null);
      return false;
    }
    return true;
  }

  private void recordFailure(String id, RuntimeFailure failure, Throwable cause) {
    config.events().startFailed(id, failure.kind());
    LOG.warn("sandbox {} failed to start ({}): {}", id, failure.kind(), failure.rawDetail(), cause);
    try {
      records.change(
          id,
          r ->
              r.withSessionKeyHash(none())
                  .withStatus(
                      SandboxStatus.ERROR, Optional.of(StartFailures.detail(failure.kind(), id))));
    } catch (RuntimeException e) {
      // The next reconcile marks it failed (STARTING without a runtime, past the start timeout).
      LOG.error("cannot record the start failure of sandbox {}", id, e);
    }
  }

  private void destroyQuietly(RuntimeHandle handle, Throwable why) {
    try {
      backend.destroy(handle);
    } catch (RuntimeException e) {
      if (why != null) {
        e.addSuppressed(why);
      }
      LOG.error("cannot destroy the runtime of sandbox {}", handle.sandboxId(), e);
    }
  }

  // Initial snapshot

  /**
   * With the initial snapshot on, archives the fresh workspace (phase {@code initial}) on its own
   * virtual thread, without the permit: the start is reported at once and nothing waits for the
   * snapshot. It is started before the start is reported, so it normally reads the workspace before
   * the first setup command; a command racing the tar walk may show up in it.
   */
  private void startInitialSnapshot(String id, RuntimeHandle handle) {
    if (archiver.isEmpty() || !config.archives().initialSnapshot()) {
      return;
    }
    Thread thread =
        Thread.ofVirtual()
            .name("paddock-snapshot-" + id)
            .unstarted(() -> initialSnapshot(id, handle));
    snapshots.add(thread);
    thread.start();
  }

  private void initialSnapshot(String id, RuntimeHandle handle) {
    try {
      Optional<SandboxRecord> record = store.find(id);
      Optional<String> url = views.agentUrl(handle);
      if (record.isEmpty() || url.isEmpty()) {
        LOG.info("sandbox {}: gone or not answering before its initial snapshot", id);
        return;
      }
      archiver
          .orElseThrow()
          .capture(
              new WorkspaceArchiver.Source(
                  id, record.get().ownerUserId(), Optional.empty(), url.get(), keys.adminKey(id)),
              WorkspaceArchiver.Phase.INITIAL,
              config.archives().initialDeadline());
    } catch (RuntimeException e) {
      LOG.warn("sandbox {}: initial snapshot failed (the sandbox runs on): {}", id, e.toString());
    } finally {
      snapshots.remove(Thread.currentThread());
    }
  }

  /** Interrupts the initial snapshots under way and waits up to 10 s for them to end. */
  void close() {
    long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    for (Thread thread : List.copyOf(snapshots)) {
      thread.interrupt();
      try {
        thread.join(Duration.ofNanos(Math.max(1, end - System.nanoTime())));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  // Pause

  /** Pauses a sandbox the caller may see. Idempotent: PAUSED stays PAUSED. */
  void pause(String id) {
    try (SandboxPermits.Permit permit = awaitPermit(id, "paused")) {
      Optional<SandboxRecord> current = store.find(permit.sandboxId());
      if (current.isEmpty() || current.get().status() == SandboxStatus.PAUSED) {
        return;
      }
      SandboxRecord record = requireStatus(current.get(), SandboxStatus.RUNNING, "paused");
      pauseHeld(record);
    }
  }

  /** Pauses a RUNNING sandbox to make room, if nobody is changing it; true when it is paused. */
  private boolean pauseVictim(SandboxRecord candidate) {
    Optional<SandboxPermits.Permit> permit = permits.tryAcquire(candidate.id());
    if (permit.isEmpty()) {
      return false;
    }
    try (SandboxPermits.Permit held = permit.get()) {
      Optional<SandboxRecord> current = store.find(held.sandboxId());
      if (current.isEmpty() || current.get().status() != SandboxStatus.RUNNING) {
        return false;
      }
      pauseHeld(current.get());
      LOG.info("paused sandbox {} to make room (pause-oldest is on)", candidate.id());
      return true;
    } catch (RuntimeException e) {
      LOG.warn("cannot pause sandbox {} to make room", candidate.id(), e);
      return false;
    }
  }

  // Order: revoke in the store, revoke at the agent (best effort), freeze, record PAUSED.
  private void pauseHeld(SandboxRecord record) {
    String id = record.id();
    records.change(id, r -> r.withSessionKeyHash(none()));
    RuntimeHandle handle = requireRuntime(record);
    revokeAtAgent(handle);
    try {
      backend.pause(handle);
    } catch (RuntimeException e) {
      throw new SandboxException(
          "could not pause sandbox " + id + "; its session key is revoked; try pausing again",
          Optional.of(id),
          e);
    }
    records.change(id, r -> r.withStatus(SandboxStatus.PAUSED, none()));
  }

  // Resume

  /** Resumes a sandbox the caller may see; RUNNING is returned as it is, without a key. */
  SandboxInfo resume(String id) {
    try (SandboxPermits.Permit permit = awaitPermit(id, "resumed")) {
      SandboxRecord record = store.find(permit.sandboxId()).orElseThrow(() -> notFound(id));
      if (record.status() == SandboxStatus.RUNNING) {
        return views.live(record);
      }
      requireStatus(record, SandboxStatus.PAUSED, "resumed");
      CompletableFuture<Void> done = new CompletableFuture<>();
      inFlight.put(id, done);
      try {
        return resumeHeld(record);
      } finally {
        inFlight.remove(id, done);
        done.complete(null);
      }
    }
  }

  private SandboxInfo resumeHeld(SandboxRecord paused) {
    String id = paused.id();
    capacity.admit(
        paused.ownerUserId(),
        id,
        () -> records.change(id, r -> r.withStatus(SandboxStatus.STARTING, none())));
    RuntimeHandle handle;
    try {
      handle = backend.resume(requireRuntime(paused));
    } catch (RuntimeStartException e) {
      recordFailure(id, e.failure(), e);
      throw new SandboxStartException(e.failure().kind().safeMessage(), id);
    } catch (RuntimeException e) {
      recordFailure(id, new RuntimeFailure(RuntimeFailure.Kind.UNKNOWN, e.toString()), e);
      throw new SandboxStartException(RuntimeFailure.Kind.UNKNOWN.safeMessage(), id);
    }
    String key = keys.newSessionKey();
    String keyHash = KeyDigest.sha256Hex(key);
    Optional<String> url = views.agentUrl(handle);
    try {
      agents.rotate(
          url.orElseThrow(() -> new IllegalStateException("resumed agent exposes no URL")),
          keys.adminKey(id),
          List.of(keyHash));
    } catch (RuntimeException e) {
      return keyNotTaken(id, handle, e);
    }
    SandboxRecord running =
        records
            .change(
                id,
                r ->
                    r.withRuntime(Optional.of(handle))
                        .withSessionKeyHash(Optional.of(keyHash))
                        .withStatus(SandboxStatus.RUNNING, none()))
            .orElseThrow(() -> notFound(id));
    return views.issued(running, views.live(running).exposedUrls(), key);
  }

  // The agent may still accept an old key: freeze it again and fail, rather than run it so.
  private SandboxInfo keyNotTaken(String id, RuntimeHandle handle, RuntimeException cause) {
    LOG.warn("sandbox {}: the resumed agent did not take its new key", id, cause);
    try {
      backend.pause(handle);
    } catch (RuntimeException e) {
      LOG.warn("sandbox {}: cannot freeze it again after the failed key rotation", id, e);
    }
    records.change(
        id,
        r ->
            r.withRuntime(Optional.of(handle))
                .withSessionKeyHash(none())
                .withStatus(
                    SandboxStatus.ERROR,
                    Optional.of(StartFailures.detail(StartFailures.KEY_NOT_TAKEN, id))));
    throw new SandboxStartException(StartFailures.KEY_NOT_TAKEN, id);
  }

  // Delete

  /**
   * Revokes the key (committed first), then tears down the runtime and removes the record. With
   * archiving on, the workspace is archived first, under the permit and with the key still valid,
   * so a required archive that fails leaves the sandbox exactly as it was.
   */
  void delete(String id) {
    if (archiver.isPresent()) {
      deleteArchived(id);
      return;
    }
    if (records.change(id, r -> r.withSessionKeyHash(none())).isEmpty()) {
      return;
    }
    try (SandboxPermits.Permit permit = awaitPermit(id, "deleted (its key is revoked)")) {
      deleteHeld(permit.sandboxId());
    }
  }

  private void deleteArchived(String id) {
    try (SandboxPermits.Permit permit = awaitPermit(id, "deleted")) {
      Optional<SandboxRecord> current = store.find(permit.sandboxId());
      if (current.isEmpty()) {
        return;
      }
      try {
        archiveHeld(current.get(), Optional.empty());
      } catch (WorkspaceArchiver.ArchiveFailure e) {
        throw new SandboxException(
            "could not delete sandbox "
                + id
                + ": archiving its workspace failed ("
                + e.getMessage()
                + "); the sandbox is kept as it was; try again",
            Optional.of(id),
            e);
      }
      records.change(id, r -> r.withSessionKeyHash(none()));
      deleteHeld(id);
    }
  }

  private void deleteHeld(String id) {
    Optional<SandboxRecord> current = store.find(id);
    if (current.isEmpty()) {
      return;
    }
    current.get().runtime().ifPresent(handle -> tearDown(id, handle));
    store.delete(id);
    views.forget(id);
  }

  // Archive

  /**
   * Archives the workspace of a sandbox the caller may see (a no-op when archiving is off).
   *
   * @return false only when archiving is required and failed
   */
  boolean archive(String id, Optional<String> conversationId) {
    if (archiver.isEmpty()) {
      return true;
    }
    try (SandboxPermits.Permit permit = awaitPermit(id, "archived")) {
      SandboxRecord record = store.find(permit.sandboxId()).orElseThrow(() -> notFound(id));
      archiveHeld(record, conversationId);
      return true;
    } catch (WorkspaceArchiver.ArchiveFailure e) {
      return false;
    }
  }

  /**
   * Captures the workspace of a RUNNING sandbox. A paused runtime cannot answer: in required mode
   * that is a failure (resume it first), otherwise it is logged. Other states have no workspace to
   * reach and are skipped.
   *
   * @throws WorkspaceArchiver.ArchiveFailure only when archiving is required
   */
  private void archiveHeld(SandboxRecord record, Optional<String> conversationId) {
    ArchiveSettings settings = config.archives();
    String id = record.id();
    try {
      if (record.status() == SandboxStatus.PAUSED) {
        throw new WorkspaceArchiver.ArchiveFailure(
            "it is paused, so its agent cannot send the workspace; resume it first", null);
      }
      if (record.status() != SandboxStatus.RUNNING || record.runtime().isEmpty()) {
        LOG.info("sandbox {} is {}: no workspace to archive", id, record.status());
        return;
      }
      String url =
          views
              .agentUrl(record.runtime().get())
              .orElseThrow(
                  () -> new WorkspaceArchiver.ArchiveFailure("its agent is not answering", null));
      archiver
          .orElseThrow()
          .capture(
              new WorkspaceArchiver.Source(
                  id, record.ownerUserId(), conversationId, url, keys.adminKey(id)));
    } catch (WorkspaceArchiver.ArchiveFailure e) {
      LOG.warn(
          "sandbox {}: archiving its workspace failed{}: {}",
          id,
          settings.required() ? "" : " (not required, going on)",
          e.getMessage(),
          e);
      if (settings.required()) {
        throw e;
      }
    }
  }

  private void tearDown(String id, RuntimeHandle handle) {
    try {
      revokeAtAgent(handle);
      backend.destroy(handle);
    } catch (RuntimeException e) {
      LOG.warn("sandbox {}: tearing down its runtime failed", id, e);
      records.change(
          id,
          r ->
              r.withSessionKeyHash(none())
                  .withStatus(
                      SandboxStatus.ERROR,
                      Optional.of(StartFailures.detail(StartFailures.DELETE_FAILED, id))));
      throw new SandboxException(
          "could not delete sandbox "
              + id
              + ": tearing down its runtime failed; its session key stays revoked; try again",
          Optional.of(id),
          e);
    }
  }

  // Shared

  /** Best effort: a frozen or dead agent cannot answer, and the store revocation holds anyway. */
  private void revokeAtAgent(RuntimeHandle handle) {
    String id = handle.sandboxId();
    try {
      Optional<String> url = views.agentUrl(handle);
      if (url.isPresent()) {
        agents.rotate(url.get(), keys.adminKey(id), List.of());
      } else {
        LOG.debug("sandbox {}: agent not answering, key revoked in the store only", id);
      }
    } catch (RuntimeException e) {
      LOG.info("sandbox {}: could not revoke the key at the agent: {}", id, e.toString());
    }
  }

  String adminDigest(String id) {
    return KeyDigest.sha256Hex(keys.adminKey(id));
  }

  private SandboxPermits.Permit awaitPermit(String id, String what) {
    return permits
        .acquire(id, config.startTimeout())
        .orElseThrow(
            () ->
                new SandboxException(
                    "sandbox "
                        + id
                        + " is busy (still starting or changing) and could not be "
                        + what
                        + " now; try again",
                    Optional.of(id)));
  }

  private static SandboxRecord requireStatus(
      SandboxRecord record, SandboxStatus wanted, String what) {
    if (record.status() != wanted) {
      throw new SandboxException(
          "sandbox "
              + record.id()
              + " is "
              + record.status()
              + " and cannot be "
              + what
              + (record.status() == SandboxStatus.STARTING
                  ? "; wait until it is running"
                  : "; delete it and start a new one"),
          Optional.of(record.id()));
    }
    return record;
  }

  private static RuntimeHandle requireRuntime(SandboxRecord record) {
    return record
        .runtime()
        .orElseThrow(
            () ->
                new SandboxException(
                    "sandbox " + record.id() + " has no runtime; delete it and start a new one",
                    Optional.of(record.id())));
  }

  static SandboxException notFound(String id) {
    return new SandboxException("sandbox " + id + " not found", Optional.of(id));
  }

  private static Optional<String> none() {
    return Optional.empty();
  }
}
