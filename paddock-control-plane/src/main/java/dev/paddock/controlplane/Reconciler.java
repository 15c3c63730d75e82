package dev.paddock.controlplane;

import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.ListedRuntime;
import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeState;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.store.SandboxOperation;
import dev.paddock.store.SandboxRecord;
import dev.paddock.store.SandboxStore;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Brings the store in line with the runtimes after a restart (or whenever asked): adopts live
 * runtimes, marks vanished ones MISSING, fails starts that died with an earlier control plane, and
 * destroys runtimes no record knows. Sandboxes being changed in this control plane right now are
 * skipped (their permit is taken).
 *
 * <p>The backend is listed before the store is read: a start inserts its record before it asks the
 * backend for a runtime, so a listed runtime without a record truly has no owner. The listing
 * carries each runtime's state ({@link SandboxBackend#listWithState()}, one bulk call where the
 * backend can): a record that agrees with it (same handle, same status) needs no further call. Any
 * disagreement is settled by a fresh inspect under the sandbox's permit, since the listing may
 * predate a change this control plane just made.
 *
 * <p>With several replicas on one store, a sandbox with an operation under way ({@link
 * SandboxRecord#operation()}) in a live replica is left alone: that replica is starting, pausing,
 * resuming or deleting it right now. One whose replica is gone (heartbeat lapsed), or this
 * replica's own when nothing here holds its permit, is handed to the {@link Takeover}.
 */
final class Reconciler {
  private static final Logger LOG = LoggerFactory.getLogger(Reconciler.class);

  private final SandboxStore store;
  private final SandboxBackend backend;
  private final ControlPlaneConfig config;
  private final SandboxPermits permits;
  private final SandboxRecords records;
  private final SandboxViews views;
  private final Replica replica;
  private final Takeover takeover;
  private final Consumer<String> finishDelete;

  /** When this control plane began: a start or delete recorded before it ran in an earlier one. */
  private final Instant booted;

  Reconciler(
      LifecycleContext context, Replica replica, Takeover takeover, Consumer<String> finishDelete) {
    this.store = context.store();
    this.backend = context.backend();
    this.config = context.config();
    this.permits = context.permits();
    this.records = context.records();
    this.views = context.views();
    this.replica = replica;
    this.takeover = takeover;
    this.finishDelete = finishDelete;
    this.booted = config.clock().instant().truncatedTo(java.time.temporal.ChronoUnit.MILLIS);
  }

  ReconcileReport run() {
    Map<String, ListedRuntime> unclaimed = new LinkedHashMap<>();
    for (ListedRuntime listed : backend.listWithState()) {
      unclaimed.putIfAbsent(listed.handle().sandboxId(), listed);
    }
    Report report = new Report();
    for (SandboxRecord record : store.withStatus(EnumSet.allOf(SandboxStatus.class))) {
      Optional<ListedRuntime> listed = Optional.ofNullable(unclaimed.remove(record.id()));
      permits
          .tryAcquire(record.id())
          .ifPresent(
              permit -> {
                try (permit) {
                  store.find(record.id()).ifPresent(r -> settle(r, listed, report));
                } catch (RuntimeException e) {
                  LOG.warn("cannot reconcile sandbox {}; next pass retries", record.id(), e);
                }
              });
    }
    unclaimed.values().forEach(listed -> reap(listed.handle(), report));
    return report.build();
  }

  private void settle(SandboxRecord record, Optional<ListedRuntime> listed, Report report) {
    if (record.operation().isEmpty()) {
      reconcile(record, listed, report);
      return;
    }
    SandboxOperation operation = record.operation().get();
    boolean mine = operation.replicaId().equals(replica.id());
    // Read now, not at the start of the pass: a replica that joined since may be the one acting.
    if (!mine && replica.live().contains(operation.replicaId())) {
      return; // under way in a live replica
    }
    if (takeover.takeOver(record, listed.map(ListedRuntime::handle))) {
      report.takenOver.add(record.id());
    }
  }

  private void reconcile(SandboxRecord record, Optional<ListedRuntime> seen, Report report) {
    if (StartFailures.deleting(record.statusDetail(), record.id())) {
      // A delete cut short by a crash (this one holds the permit, so none runs here now).
      finishDelete.accept(record.id());
      report.reaped.add(record.id());
      return;
    }
    if (record.status() == SandboxStatus.ERROR) {
      return; // keeps its detail; delete tears down whatever runtime it has
    }
    if (seen.isPresent() && agrees(record, seen.get())) {
      report.adopted.add(record.id());
      return;
    }
    Optional<RuntimeHandle> listed = seen.map(ListedRuntime::handle);
    Optional<RuntimeHandle> handle = record.runtime().or(() -> listed);
    if (handle.isEmpty()) {
      failIfAbandoned(record, report);
      return;
    }
    RuntimeState state = views.inspect(handle.get(), record.status());
    if (state.status() == SandboxStatus.MISSING && listed.isPresent()) {
      handle = listed; // the stored handle is stale (e.g. a resume moved the runtime)
      state = views.inspect(listed.get(), record.status());
    }
    if (unknowable(state)) {
      LOG.warn("sandbox {}: its runtime cannot be asked now; next pass retries", record.id());
      return;
    }
    if (state.status() == SandboxStatus.MISSING) {
      markMissing(record, report);
    } else if (slowToAnswer(record, handle.get(), state)) {
      report.adopted.add(record.id());
    } else {
      adopt(record, handle.get(), state, report);
    }
  }

  /**
   * A RUNNING sandbox whose runtime is still the one it served from but whose agent did not answer
   * the backend's probe in time (a loaded host, a long GC): backends call that STARTING, but an
   * agent that served does not start again, so it stays RUNNING with its key. Adopting STARTING
   * would revoke the owner's key in the store for good (the next pass adopts RUNNING without one)
   * and shut the gateway's door on a working agent (found by the load suite: 50 sandboxes starting
   * at once on 2 cores). A dead agent is ERROR and a gone one MISSING, and those still apply.
   */
  private static boolean slowToAnswer(
      SandboxRecord record, RuntimeHandle handle, RuntimeState state) {
    return record.status() == SandboxStatus.RUNNING
        && state.status() == SandboxStatus.STARTING
        && record.runtime().equals(Optional.of(handle));
  }

  /**
   * The backend could not ask the runtime (its container engine is away): nothing is known of the
   * sandbox, so nothing about it changes. Adopting that answer would mark a running sandbox ERROR
   * and revoke its key because the engine blinked (a restart with live-restore keeps containers).
   */
  private static boolean unknowable(RuntimeState state) {
    return state
        .failure()
        .filter(f -> f.kind().equals(RuntimeFailure.Kind.ENGINE_UNREACHABLE))
        .isPresent();
  }

  /** The listing says what the record says: nothing to change, no inspect needed. */
  private static boolean agrees(SandboxRecord record, ListedRuntime listed) {
    return record.runtime().equals(Optional.of(listed.handle()))
        && record.status() == listed.state().status()
        && (record.status() == SandboxStatus.RUNNING || record.sessionKeyHash().isEmpty());
  }

  /**
   * A STARTING record without a runtime whose start is not under way here (its permit was free):
   * one recorded before this control plane began died with an earlier one and fails now; a newer
   * one (another replica's start) fails only past the start timeout.
   */
  private void failIfAbandoned(SandboxRecord record, Report report) {
    // Since it turned STARTING: a create admitted from the start queue was created earlier.
    Instant deadline = record.updatedAt().plus(config.startTimeout());
    boolean earlier = record.updatedAt().isBefore(booted);
    if (record.status() != SandboxStatus.STARTING
        || (!earlier && config.clock().instant().isBefore(deadline))) {
      return;
    }
    failStart(record, report);
  }

  private void failStart(SandboxRecord record, Report report) {
    LOG.warn("sandbox {}: its start task died with an earlier control plane", record.id());
    records.change(
        record.id(),
        r ->
            r.withSessionKeyHash(Optional.empty())
                .withStatus(
                    SandboxStatus.ERROR,
                    Optional.of(StartFailures.detail(StartFailures.INTERRUPTED, record.id()))));
    report.failedStarts.add(record.id());
  }

  private void markMissing(SandboxRecord record, Report report) {
    if (record.status() == SandboxStatus.MISSING) {
      return;
    }
    if (record.status() == SandboxStatus.STARTING) {
      // Its runtime went away before it served, and no start of it runs here (the permit was
      // free): the start died with an earlier control plane.
      failStart(record, report);
      return;
    }
    LOG.warn("sandbox {}: its runtime is gone", record.id());
    records.change(
        record.id(),
        r ->
            r.withSessionKeyHash(Optional.empty())
                .withStatus(
                    SandboxStatus.MISSING,
                    Optional.of(StartFailures.detail(StartFailures.GONE, record.id()))));
    report.missing.add(record.id());
  }

  // A key is only valid while RUNNING: any other live status revokes it in the store.
  private void adopt(SandboxRecord record, RuntimeHandle handle, RuntimeState state, Report r) {
    SandboxStatus live = state.status();
    Optional<String> detail = state.failure().map(f -> StartFailures.detail(f, record.id()));
    boolean unchanged =
        record.status() == live
            && record.runtime().equals(Optional.of(handle))
            && (live == SandboxStatus.RUNNING || record.sessionKeyHash().isEmpty());
    r.adopted.add(record.id());
    if (unchanged) {
      return;
    }
    records.change(
        record.id(),
        s -> {
          SandboxRecord adopted = s.withRuntime(Optional.of(handle)).withStatus(live, detail);
          return live == SandboxStatus.RUNNING
              ? adopted
              : adopted.withSessionKeyHash(Optional.empty());
        });
  }

  private void reap(RuntimeHandle handle, Report report) {
    try {
      backend.destroy(handle);
      LOG.info("reaped runtime of unknown sandbox {}", handle.sandboxId());
      report.reaped.add(handle.sandboxId());
    } catch (RuntimeException e) {
      LOG.warn("cannot reap runtime of unknown sandbox {}", handle.sandboxId(), e);
    }
  }

  private static final class Report {
    final List<String> adopted = new ArrayList<>();
    final List<String> missing = new ArrayList<>();
    final List<String> failedStarts = new ArrayList<>();
    final List<String> reaped = new ArrayList<>();
    final List<String> takenOver = new ArrayList<>();

    ReconcileReport build() {
      return new ReconcileReport(adopted, missing, failedStarts, reaped, takenOver);
    }
  }
}
