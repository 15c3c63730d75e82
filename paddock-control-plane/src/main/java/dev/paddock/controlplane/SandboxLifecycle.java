package dev.paddock.controlplane;

import dev.paddock.api.Caller;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxSpecService;
import dev.paddock.api.StartRequest;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.backend.kit.protocol.HttpAgents;
import dev.paddock.store.SandboxRecord;
import dev.paddock.store.SandboxStore;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The state changes of sandboxes, one operation per class: {@link SandboxStarter}, {@link
 * SandboxPauser}, {@link SandboxResumer}, {@link SandboxDeleter}, {@link WorkspaceCapture} and
 * {@link InitialSnapshots}, sharing a {@link LifecycleContext}. This class only wires them. Callers
 * have already checked that the caller may see the sandbox. Every change of one sandbox runs under
 * its permit (see {@link SandboxPermits}); key revocations are written before the permit is awaited
 * where the contract says "first".
 */
final class SandboxLifecycle {
  private final LifecycleContext context;
  private final InitialSnapshots snapshots;
  private final StartPlans plans;
  private final SandboxStarter starter;
  private final SandboxPauser pauser;
  private final SandboxResumer resumer;
  private final SandboxDeleter deleter;
  private final WorkspaceCapture capture;
  private final StartQueue queue;

  SandboxLifecycle(
      SandboxStore store,
      SandboxBackend backend,
      SandboxSpecService specs,
      ControlPlaneConfig config,
      HttpAgents agents,
      SandboxPermits permits,
      Optional<WorkspaceArchiver> archiver) {
    SandboxRecords records = new SandboxRecords(store);
    SandboxViews views = new SandboxViews(backend);
    SessionKeys sessionKeys = new SessionKeys(config.masterSecret());
    AgentKeys keys =
        new AgentKeys(sessionKeys, new SandboxAgents(backend, views, sessionKeys, agents, store));
    this.context =
        new LifecycleContext(
            store,
            backend,
            config,
            permits,
            records,
            views,
            keys,
            new InFlight(),
            new LifecycleErrors(records, backend, config),
            new OperationClaims(store, config));
    this.pauser = new SandboxPauser(context);
    Capacity capacity = new Capacity(store, config, pauser::pauseVictim);
    this.snapshots = new InitialSnapshots(context, archiver);
    this.plans = new StartPlans(specs, config.limits());
    this.starter = new SandboxStarter(context, plans, capacity, snapshots);
    this.queue = StartQueue.open(context, starter, plans);
    this.resumer = new SandboxResumer(context, capacity);
    this.capture = new WorkspaceCapture(context, archiver);
    this.deleter = new SandboxDeleter(context, capture);
  }

  SandboxViews views() {
    return context.views();
  }

  SandboxRecords records() {
    return context.records();
  }

  LifecycleContext context() {
    return context;
  }

  /** Archives workspaces, also for a delete the takeover finishes. */
  WorkspaceCapture capture() {
    return capture;
  }

  /** The start or resume of this sandbox under way here, if any. */
  Optional<CompletableFuture<Void>> inFlight(String sandboxId) {
    return context.inFlight().of(sandboxId);
  }

  /** Every start and resume under way here. */
  List<CompletableFuture<Void>> allInFlight() {
    return context.inFlight().all();
  }

  SandboxInfo start(Caller caller, StartRequest request) {
    return starter.start(caller, request);
  }

  /** The start queue, for creates that ask to wait for a slot. */
  StartQueue queue() {
    return queue;
  }

  StartPlans plans() {
    return plans;
  }

  AgentKeys keys() {
    return context.keys();
  }

  void pause(String id) {
    pauser.pause(id);
    events().paused(id);
  }

  SandboxInfo resume(String id) {
    SandboxInfo resumed = resumer.resume(id);
    events().resumed(id);
    return resumed;
  }

  /** Tells {@link SandboxEvents#deleting} first, so the agent's log can be kept. */
  void delete(String id) {
    Optional<SandboxRecord> existing = context.store().find(id);
    existing.flatMap(SandboxRecord::runtime).ifPresent(runtime -> events().deleting(id, runtime));
    deleter.delete(id);
    if (existing.isPresent()) {
      events().deleted(id);
    }
  }

  /** Finishes a delete a control-plane crash cut short; the caller holds the sandbox's permit. */
  void finishDelete(String id) {
    deleter.finishInterrupted(id);
  }

  boolean archive(String id, Optional<String> conversationId) {
    return capture.archive(id, conversationId);
  }

  private SandboxEvents events() {
    return context.config().events();
  }

  /** Interrupts the initial snapshots under way and waits up to 10 s for them to end. */
  void close() {
    snapshots.close();
  }
}
