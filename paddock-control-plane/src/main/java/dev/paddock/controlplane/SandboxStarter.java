package dev.paddock.controlplane;

import static dev.paddock.controlplane.LifecycleErrors.none;

import dev.paddock.api.Caller;
import dev.paddock.api.InvalidRequestException;
import dev.paddock.api.KeyDigest;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.StartRequest;
import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeRequest;
import dev.paddock.api.spi.RuntimeStartException;
import dev.paddock.store.ConflictException;
import dev.paddock.store.SandboxOperation;
import dev.paddock.store.SandboxRecord;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts sandboxes: validates the id, admits the start against capacity, inserts the record
 * STARTING with its key's hash, and asks the backend for the runtime on a virtual thread that holds
 * the sandbox's permit until the runtime is up or has failed.
 */
final class SandboxStarter {
  private static final Logger LOG = LoggerFactory.getLogger(SandboxStarter.class);
  private static final Pattern ID = Pattern.compile("[a-z0-9][a-z0-9-]{2,62}");
  private static final HexFormat HEX = HexFormat.of();

  private final LifecycleContext context;
  private final StartPlans plans;
  private final Capacity capacity;
  private final InitialSnapshots snapshots;
  private final SecureRandom random = new SecureRandom();

  SandboxStarter(
      LifecycleContext context, StartPlans plans, Capacity capacity, InitialSnapshots snapshots) {
    this.context = context;
    this.plans = plans;
    this.capacity = capacity;
    this.snapshots = snapshots;
  }

  SandboxInfo start(Caller caller, StartRequest request) {
    Instant now = context.config().clock().instant();
    StartPlans.Plan plan = plans.plan(request, now);
    String id = request.sandboxId().map(SandboxStarter::validId).orElseGet(this::newId);
    SandboxPermits.Permit permit =
        context
            .permits()
            .tryAcquire(id)
            .orElseThrow(() -> idTaken(id)); // someone is changing that id now
    return launch(
            caller,
            plan,
            permit,
            (generation, keyHash) ->
                Optional.of(
                    insert(
                        newRecord(id, caller, plan, now)
                            .withKey(generation, Optional.of(keyHash))
                            .withOperation(Optional.of(startClaim())))))
        .orElseThrow();
  }

  /**
   * Starts the QUEUED sandbox {@code id} from {@code request} if capacity admits it and {@code
   * turn} (asked under the admission lock) says it is next; empty otherwise, changing nothing. Its
   * lifetime starts now, not when it joined the queue.
   *
   * @throws dev.paddock.api.CapacityExceededException when no slot is free
   * @throws dev.paddock.api.SandboxException when the sandbox left the queue (deleted, or failed)
   */
  Optional<SandboxInfo> startQueued(
      Caller caller, StartRequest request, String id, BooleanSupplier turn) {
    Instant now = context.config().clock().instant();
    StartPlans.Plan plan = plans.plan(request, now);
    SandboxPermits.Permit permit = context.awaitPermit(id, "started");
    return launch(
        caller,
        plan,
        permit,
        (generation, keyHash) ->
            turn.getAsBoolean()
                ? Optional.of(admitted(id, plan, now, generation, keyHash))
                : Optional.empty());
  }

  /** Makes the new sandbox count against capacity (under the admission lock); empty: not now. */
  @FunctionalInterface
  private interface Reservation {
    Optional<SandboxRecord> reserve(long generation, String keyHash);
  }

  /**
   * Admits and begins the start of {@code permit}'s sandbox; the start task then holds the permit.
   * When {@code reservation} declines, releases everything and returns empty.
   */
  private Optional<SandboxInfo> launch(
      Caller caller, StartPlans.Plan plan, SandboxPermits.Permit permit, Reservation reservation) {
    String id = permit.sandboxId();
    SandboxSpec spec = plan.spec();
    CompletableFuture<Void> done = null;
    boolean launched = false;
    try {
      long generation = context.keys().firstGeneration();
      String key = context.keys().sessionKey(id, generation);
      String keyHash = KeyDigest.sha256Hex(key);
      // Registered before the record exists, so a waiter never finds STARTING without a future.
      done = context.inFlight().begin(id);
      Optional<SandboxRecord> record =
          capacity.admit(caller.userId(), id, () -> reservation.reserve(generation, keyHash));
      if (record.isEmpty()) {
        return Optional.empty();
      }
      CompletableFuture<Void> started = done;
      Thread.ofVirtual()
          .name("paddock-start-" + id)
          .start(() -> runStart(id, spec, launchKey(spec, key), keyHash, permit, started));
      launched = true;
      return Optional.of(context.views().issued(record.get(), List.of(), key));
    } finally {
      if (!launched) {
        if (done != null) {
          context.inFlight().end(id, done);
        }
        permit.close();
      }
    }
  }

  /** This replica's claim on a start: another replica leaves the record alone while it lives. */
  private SandboxOperation startClaim() {
    return context.claims().mine(SandboxOperation.Kind.START);
  }

  /** The QUEUED record turned STARTING with its key and lifetime, and out of the queue. */
  private SandboxRecord admitted(
      String id, StartPlans.Plan plan, Instant now, long generation, String keyHash) {
    SandboxRecord started =
        context
            .records()
            .change(
                id,
                r -> {
                  if (r.status() != SandboxStatus.QUEUED) {
                    throw StartQueue.leftQueue(r);
                  }
                  return r.withStatus(SandboxStatus.STARTING, none())
                      .withKey(generation, Optional.of(keyHash))
                      .withTimeoutAt(plan.timeoutAt())
                      .withLastActivityAt(Optional.of(now))
                      .withOperation(Optional.of(startClaim()));
                })
            .orElseThrow(() -> StartQueue.deletedWhileQueued(id));
    context.store().dequeue(id);
    return started;
  }

  static String validId(String id) {
    if (!ID.matcher(id).matches()) {
      throw InvalidRequestException.badRequest(
          "malformed sandbox id '"
              + id
              + "': use 3 to 63 lower-case letters, digits and '-', starting with a letter or"
              + " digit");
    }
    return id;
  }

  String newId() {
    byte[] bytes = new byte[8];
    random.nextBytes(bytes);
    return "sb-" + HEX.formatHex(bytes);
  }

  /**
   * The same answer whoever holds the id (the caller, another user, a create under way): ids are
   * one namespace for all users, so "not available" cannot be hidden, but the owner is never named.
   */
  static InvalidRequestException idTaken(String id) {
    return InvalidRequestException.badRequest(
        "sandbox id '"
            + id
            + "' is taken (ids are unique across all users, including deleted ones still being"
            + " torn down); choose another");
  }

  private SandboxRecord newRecord(String id, Caller caller, StartPlans.Plan plan, Instant now) {
    return new SandboxRecord(
        id,
        caller.userId(),
        plan.spec().id(),
        SandboxStatus.STARTING,
        Optional.empty(),
        Optional.empty(),
        Optional.empty(),
        now,
        now,
        0,
        plan.settings(),
        plan.timeoutAt(),
        Optional.of(now),
        0);
  }

  private SandboxRecord insert(SandboxRecord record) {
    if (context.store().find(record.id()).isPresent()) {
      throw idTaken(record.id());
    }
    try {
      return context.store().insert(record);
    } catch (ConflictException e) {
      throw idTaken(record.id());
    }
  }

  /**
   * The plaintext key goes to the backend only for an image that brings its own agent-server:
   * OpenHands' launch contract has no other way in (the store still holds only the hash).
   */
  private static Optional<String> launchKey(SandboxSpec spec, String key) {
    return spec.agentServer() == SandboxSpec.AgentServer.IMAGE
        ? Optional.of(key)
        : Optional.empty();
  }

  /** The start task, on its own virtual thread; holds the sandbox's permit until it ends. */
  private void runStart(
      String id,
      SandboxSpec spec,
      Optional<String> launchKey,
      String keyHash,
      SandboxPermits.Permit permit,
      CompletableFuture<Void> done) {
    long began = System.nanoTime();
    try (permit) {
      RuntimeRequest request =
          new RuntimeRequest(
              id,
              spec,
              spec.initialEnv(),
              List.of(keyHash),
              context.keys().adminDigest(id),
              launchKey);
      RuntimeHandle handle;
      try {
        handle = context.backend().start(request);
      } catch (RuntimeStartException e) {
        context.errors().recordStartFailure(id, e.failure(), e);
        return;
      } catch (RuntimeException e) {
        context.errors().recordStartFailure(id, unknown(e), e);
        return;
      }
      if (recordStarted(id, handle)) {
        context.config().events().started(id, Duration.ofNanos(System.nanoTime() - began));
        snapshots.begin(id, handle);
      }
    } finally {
      context.claims().release(id); // after a failure; a recorded start cleared it already
      context.inFlight().end(id, done);
    }
  }

  /** Stores the started runtime; false when the sandbox could not be recorded as RUNNING. */
  private boolean recordStarted(String id, RuntimeHandle handle) {
    Optional<SandboxRecord> stored;
    try {
      stored =
          context
              .records()
              .change(
                  id,
                  r ->
                      takenOver(r)
                          ? r
                          : context
                              .claims()
                              .ended(r)
                              .withRuntime(Optional.of(handle))
                              .withStatus(SandboxStatus.RUNNING, none()));
    } catch (RuntimeException e) {
      context.errors().destroyQuietly(handle, Optional.of(e));
      context.errors().recordStartFailure(id, unknown(e), e);
      return false;
    }
    if (stored.isEmpty()) {
      // The record went away while the runtime started (removed from the store directly):
      // nothing refers to the runtime any more, so it must not outlive this task.
      LOG.warn("sandbox {} was removed while starting; destroying its runtime", id);
      context.errors().destroyQuietly(handle, Optional.empty());
      return false;
    }
    if (takenOver(stored.get())) {
      // Another replica thought this one dead (its heartbeat lapsed) and undid the start: the
      // record no longer names this runtime, so it goes too.
      LOG.warn("sandbox {}: its start was taken over by another replica; destroying it", id);
      context.errors().destroyQuietly(handle, Optional.empty());
      return false;
    }
    return true;
  }

  /** Whether another replica took this start over (its operation mark is no longer ours). */
  private boolean takenOver(SandboxRecord record) {
    return record.operation().filter(o -> !context.claims().isMine(o)).isPresent()
        || record.status() != SandboxStatus.STARTING && record.status() != SandboxStatus.RUNNING;
  }

  static RuntimeFailure unknown(RuntimeException e) {
    return new RuntimeFailure(RuntimeFailure.Kind.UNKNOWN, e.toString());
  }
}
