package dev.paddock.controlplane;

import dev.paddock.api.Caller;
import dev.paddock.api.CapacityExceededException;
import dev.paddock.api.InvalidRequestException;
import dev.paddock.api.QueuePlace;
import dev.paddock.api.SandboxException;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.StartRequest;
import dev.paddock.store.ConflictException;
import dev.paddock.store.QueueEntry;
import dev.paddock.store.SandboxRecord;
import dev.paddock.store.SandboxStore;
import java.security.SecureRandom;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The start queue: a create that asks for a queue timeout and finds no free slot waits here, in
 * {@link FairOrder} (round-robin across owners, FIFO within one), instead of failing at once.
 *
 * <p>The queue lives in the store: each waiting create is a QUEUED sandbox record (so it is listed,
 * found and deleted like any sandbox) and a {@link QueueEntry} with a lease. Its environment may
 * hold secrets and is never stored, so only the control plane whose request waits can start it:
 * each waiting request is its own admitter, trying on its own thread, under the capacity lock,
 * whenever something here changed (a delete, a pause, another create leaving the queue) and at
 * least once a second (changes made by other replicas). It is admitted only when every live entry
 * ahead of it that capacity allows would fit too, so the order holds across replicas. One virtual
 * thread, {@code paddock-queue-leases}, renews this instance's leases and fails, clearly, the
 * entries whose lease ran out: their control plane stopped (a restart or a crash), the request is
 * gone, and the record turns ERROR saying so. Closing this queue withdraws its waiting creates
 * (their callers get an answer saying nothing was made).
 *
 * <p>Threads and locks (see docs/CONCURRENCY.md): {@code lock} guards {@code generation} and {@code
 * closed}; it is never held while calling the store or the starter. Lock order with the rest:
 * waiting requests take a sandbox's permit, then the capacity lock, as any start does.
 */
final class StartQueue implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(StartQueue.class);
  private static final long RECHECK_NANOS = TimeUnit.SECONDS.toNanos(1);
  private static final EnumSet<SandboxStatus> ACTIVE =
      EnumSet.of(SandboxStatus.STARTING, SandboxStatus.RUNNING);
  private static final String WAITING = "waiting in the start queue for a free slot";

  private final LifecycleContext context;
  private final SandboxStarter starter;
  private final StartPlans plans;
  private final QueueSettings settings;
  private final String holder;
  private final Map<String, Waiter> waiters = new ConcurrentHashMap<>();
  private final AdmissionPace pace = new AdmissionPace();
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final Condition stopping = lock.newCondition();
  // Guarded by lock.
  private long generation;
  // Guarded by lock.
  private boolean closed;
  private final Thread leases;

  /** A create of this control plane waiting in the queue. */
  private record Waiter(QueueEntry entry, long joinedNanos, long deadlineNanos) {}

  private StartQueue(LifecycleContext context, SandboxStarter starter, StartPlans plans) {
    this.context = context;
    this.starter = starter;
    this.plans = plans;
    this.settings = context.config().queue();
    byte[] bytes = new byte[8];
    new SecureRandom().nextBytes(bytes);
    this.holder = "cp-" + HexFormat.of().formatHex(bytes);
    failAbandoned(); // entries left by a control plane that stopped before this one started
    this.leases = Thread.ofVirtual().name("paddock-queue-leases").start(this::tendLeases);
  }

  static StartQueue open(LifecycleContext context, SandboxStarter starter, StartPlans plans) {
    return new StartQueue(context, starter, plans);
  }

  /**
   * Starts the sandbox {@code request} asks for, waiting up to its queue timeout for a slot when
   * there is none (or others wait already). Returns as {@link SandboxStarter#start} does.
   *
   * @throws InvalidRequestException for a queue timeout out of bounds, as for any bad value
   * @throws CapacityExceededException when no slot came in time, or the queue is full
   * @throws SandboxException when the queued sandbox was deleted, or this control plane closed
   */
  SandboxInfo start(Caller caller, StartRequest request) {
    Duration timeout = validTimeout(request.queueTimeout().orElseThrow());
    StartRequest plain = request.withoutQueue();
    if (context.config().pauseOldest()) {
      return starter.start(caller, plain); // never at capacity: the oldest is paused instead
    }
    if (liveEntries(context.config().clock().instant()).isEmpty()) {
      try {
        return starter.start(caller, plain);
      } catch (CapacityExceededException e) {
        // No slot now: wait in the queue.
      }
    }
    return waitInQueue(caller, plain, timeout);
  }

  private Duration validTimeout(Duration timeout) {
    if (timeout.isNegative() || timeout.isZero()) {
      throw InvalidRequestException.badRequest(
          "queue_timeout must be a positive number of seconds, got " + timeout.toSeconds());
    }
    if (timeout.compareTo(settings.maxTimeout()) > 0) {
      throw InvalidRequestException.badRequest(
          "queue_timeout "
              + timeout.toSeconds()
              + " s is longer than the operator allows ("
              + settings.maxTimeout().toSeconds()
              + " s, PADDOCK_QUEUE_MAX_TIMEOUT)");
    }
    return timeout;
  }

  private SandboxInfo waitInQueue(Caller caller, StartRequest request, Duration timeout) {
    Instant now = context.config().clock().instant();
    StartPlans.Plan plan = plans.plan(request, now); // a bad request fails before it waits
    String id = request.sandboxId().map(SandboxStarter::validId).orElseGet(starter::newId);
    long turn = FairOrder.turnFor(caller.userId(), liveEntries(now));
    QueueEntry entry =
        new QueueEntry(
            id, caller.userId(), turn, now, now.plus(timeout), holder, now.plus(settings.lease()));
    long joined = System.nanoTime();
    Waiter waiter = new Waiter(entry, joined, joined + timeout.toNanos());
    if (waiters.putIfAbsent(id, waiter) != null) {
      throw SandboxStarter.idTaken(id);
    }
    try {
      requireRoom(id);
      join(entry, queuedRecord(id, caller, plan, now));
      return awaitTurn(caller, request, waiter);
    } finally {
      waiters.remove(id, waiter);
      signal(); // whoever was behind this one may be next now
    }
  }

  private void requireRoom(String id) {
    int waiting = context.store().queue().size();
    if (waiting >= settings.maxLength()) {
      throw new CapacityExceededException(
          "at capacity, and the start queue is full ("
              + waiting
              + " creates waiting, PADDOCK_QUEUE_MAX_LENGTH="
              + settings.maxLength()
              + "); sandbox "
              + id
              + " was not created; try again later");
    }
  }

  /** Writes the entry, then the QUEUED record: an entry without a record is only ever swept. */
  private void join(QueueEntry entry, SandboxRecord record) {
    SandboxStore store = context.store();
    try {
      store.enqueue(entry);
    } catch (ConflictException e) {
      throw SandboxStarter.idTaken(entry.sandboxId());
    }
    try {
      if (store.find(entry.sandboxId()).isPresent()) {
        throw SandboxStarter.idTaken(entry.sandboxId());
      }
      store.insert(record);
    } catch (ConflictException e) {
      store.dequeue(entry.sandboxId());
      throw SandboxStarter.idTaken(entry.sandboxId());
    } catch (RuntimeException e) {
      store.dequeue(entry.sandboxId());
      throw e;
    }
  }

  private static SandboxRecord queuedRecord(
      String id, Caller caller, StartPlans.Plan plan, Instant now) {
    return new SandboxRecord(
        id,
        caller.userId(),
        plan.spec().id(),
        SandboxStatus.QUEUED,
        Optional.empty(),
        Optional.empty(),
        Optional.of(WAITING),
        now,
        now,
        0,
        plan.settings(),
        Optional.empty(),
        Optional.empty(),
        0);
  }

  private SandboxInfo awaitTurn(Caller caller, StartRequest request, Waiter waiter) {
    String id = waiter.entry().sandboxId();
    while (true) {
      long seen = generation();
      requireStillQueued(id);
      Optional<SandboxInfo> admitted = tryAdmit(caller, request, id);
      if (admitted.isPresent()) {
        Duration waited = waited(waiter);
        pace.admitted();
        context.config().events().queueAdmitted(id, waited);
        return admitted.get();
      }
      if (isClosed()) {
        withdraw(id);
        throw new SandboxException(
            "the control plane is shutting down: sandbox "
                + id
                + " left the start queue and nothing was created; create it again",
            Optional.of(id));
      }
      long left = waiter.deadlineNanos() - System.nanoTime();
      if (left <= 0) {
        throw timedOut(waiter);
      }
      awaitChange(seen, Math.min(left, RECHECK_NANOS));
    }
  }

  /** Fails the waiting create when its sandbox was deleted or failed meanwhile (even when full). */
  private void requireStillQueued(String id) {
    Optional<SandboxRecord> record = context.store().find(id);
    if (record.isEmpty()) {
      context.store().dequeue(id);
      throw deletedWhileQueued(id);
    }
    if (record.get().status() != SandboxStatus.QUEUED) {
      context.store().dequeue(id);
      throw leftQueue(record.get());
    }
  }

  private Optional<SandboxInfo> tryAdmit(Caller caller, StartRequest request, String id) {
    try {
      return starter.startQueued(caller, request, id, () -> isNext(id));
    } catch (CapacityExceededException e) {
      return Optional.empty();
    } catch (RuntimeException e) {
      withdrawQuietly(id); // it left the queue (deleted, failed), or could not start now
      throw e;
    }
  }

  /**
   * Whether {@code id} is the next create capacity admits: walking the fair order, every live entry
   * ahead of it that fits takes its place first; an entry whose owner is at the per-user limit is
   * passed over. Called under the capacity lock, after the limits admitted {@code id}.
   */
  private boolean isNext(String id) {
    List<SandboxRecord> active =
        context.store().withStatus(ACTIVE).stream().filter(r -> !r.id().equals(id)).toList();
    int total = active.size();
    Map<Optional<String>, Integer> perOwner = new HashMap<>();
    active.forEach(r -> perOwner.merge(r.ownerUserId(), 1, Integer::sum));
    ControlPlaneConfig config = context.config();
    for (QueueEntry entry : FairOrder.of(liveEntries(config.clock().instant()))) {
      if (total >= config.maxSandboxes()) {
        return false;
      }
      int owned = perOwner.getOrDefault(entry.owner(), 0);
      if (owned >= config.maxSandboxesPerUser()) {
        continue;
      }
      if (entry.sandboxId().equals(id)) {
        return true;
      }
      total++;
      perOwner.put(entry.owner(), owned + 1);
    }
    return false;
  }

  /** The entries whose create is alive (lease held, or waiting here) and whose record waits. */
  private List<QueueEntry> liveEntries(Instant now) {
    Set<String> queued =
        context.store().withStatus(EnumSet.of(SandboxStatus.QUEUED)).stream()
            .map(SandboxRecord::id)
            .collect(Collectors.toSet());
    if (queued.isEmpty()) {
      return List.of();
    }
    return context.store().queue().stream()
        .filter(e -> queued.contains(e.sandboxId()) && (e.leaseUntil().isAfter(now) || isMine(e)))
        .toList();
  }

  // A create waiting here is alive whatever its stored lease says (the renewal may lag).
  private boolean isMine(QueueEntry entry) {
    return entry.holder().equals(holder) && waiters.containsKey(entry.sandboxId());
  }

  private CapacityExceededException timedOut(Waiter waiter) {
    String id = waiter.entry().sandboxId();
    Optional<QueuePlace> place = places().getOrDefault(id, Optional.empty());
    withdraw(id);
    Duration waited = waited(waiter);
    context.config().events().queueTimedOut(id, waited);
    return new CapacityExceededException(
        "at capacity: waited "
            + waited.toSeconds()
            + " s in the start queue without a slot coming free"
            + place.map(p -> " (position " + p.position() + " of " + p.length() + ")").orElse("")
            + "; sandbox "
            + id
            + " was not created; try again later or ask for a longer queue_timeout (at most "
            + settings.maxTimeout().toSeconds()
            + " s)");
  }

  private static Duration waited(Waiter waiter) {
    return Duration.ofNanos(System.nanoTime() - waiter.joinedNanos());
  }

  /** Removes a waiting create that gives up: its record (still QUEUED) and its entry. */
  private void withdraw(String id) {
    SandboxStore store = context.store();
    try {
      if (store.find(id).filter(r -> r.status() == SandboxStatus.QUEUED).isPresent()) {
        store.delete(id);
      }
    } finally {
      store.dequeue(id);
    }
  }

  private void withdrawQuietly(String id) {
    try {
      withdraw(id);
    } catch (RuntimeException e) {
      LOG.warn("sandbox {}: cannot leave the start queue; the lease sweep will fail it", id, e);
    }
  }

  /**
   * Removes a QUEUED sandbox (a delete): its record and entry go, its waiting create fails saying
   * it was deleted. False when it is not QUEUED (any more): delete it as any other sandbox.
   */
  boolean cancel(String id) {
    SandboxStore store = context.store();
    Optional<SandboxRecord> record = store.find(id);
    if (record.isEmpty() || record.get().status() != SandboxStatus.QUEUED) {
      return false;
    }
    try (SandboxPermits.Permit permit = context.awaitPermit(id, "deleted")) {
      Optional<SandboxRecord> now = store.find(permit.sandboxId());
      if (now.isEmpty() || now.get().status() != SandboxStatus.QUEUED) {
        return now.isEmpty(); // admitted meanwhile: the caller deletes it as a started sandbox
      }
      store.delete(id);
      store.dequeue(id);
    } finally {
      signal();
    }
    return true;
  }

  /** Where each QUEUED sandbox with a live entry stands, computed once for a whole listing. */
  Map<String, Optional<QueuePlace>> places() {
    List<QueueEntry> order = FairOrder.of(liveEntries(context.config().clock().instant()));
    Map<String, Optional<QueuePlace>> places = new LinkedHashMap<>();
    for (int i = 0; i < order.size(); i++) {
      QueueEntry e = order.get(i);
      places.put(
          e.sandboxId(),
          Optional.of(
              new QueuePlace(
                  i + 1, order.size(), e.enqueuedAt(), e.deadline(), pace.expected(i + 1))));
    }
    return places;
  }

  /** Wakes the waiting creates of this control plane: a slot may be free, or the order changed. */
  void signal() {
    lock.lock();
    try {
      generation++;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  private long generation() {
    lock.lock();
    try {
      return generation;
    } finally {
      lock.unlock();
    }
  }

  private boolean isClosed() {
    lock.lock();
    try {
      return closed;
    } finally {
      lock.unlock();
    }
  }

  private void awaitChange(long seen, long nanos) {
    lock.lock();
    try {
      long left = nanos;
      while (generation == seen && !closed && left > 0) {
        left = changed.awaitNanos(left);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new SandboxException("interrupted while waiting in the start queue", Optional.empty());
    } finally {
      lock.unlock();
    }
  }

  /** The lease thread: renew this instance's leases, fail the abandoned, every third of a lease. */
  private void tendLeases() {
    long periodNanos = settings.lease().toNanos() / 3;
    while (true) {
      try {
        renew();
        failAbandoned();
      } catch (RuntimeException e) {
        LOG.warn("start queue: renewing or sweeping leases failed; the next round retries", e);
      }
      lock.lock();
      try {
        long left = periodNanos;
        while (!closed && left > 0) {
          left = stopping.awaitNanos(left);
        }
        if (closed) {
          return;
        }
      } catch (InterruptedException e) {
        return;
      } finally {
        lock.unlock();
      }
    }
  }

  private void renew() {
    if (!waiters.isEmpty()) {
      Instant until = context.config().clock().instant().plus(settings.lease());
      context.store().renewQueueLeases(holder, List.copyOf(waiters.keySet()), until);
    }
  }

  /**
   * Fails every entry whose lease ran out and that no request here waits for: its control plane
   * stopped, its request (and the environment it carried) is gone. The record turns ERROR saying
   * so, never silently removed; the entry goes.
   */
  private void failAbandoned() {
    Instant now = context.config().clock().instant();
    boolean any = false;
    for (QueueEntry entry : context.store().queue()) {
      if (entry.leaseUntil().isAfter(now) || waiters.containsKey(entry.sandboxId())) {
        continue;
      }
      String id = entry.sandboxId();
      LOG.warn("sandbox {}: its queued create was lost with control plane {}", id, entry.holder());
      Optional<SandboxRecord> record = context.store().find(id);
      if (record.isPresent() && record.get().status() == SandboxStatus.QUEUED) {
        context
            .records()
            .change(
                id,
                r ->
                    r.status() == SandboxStatus.QUEUED
                        ? r.withStatus(SandboxStatus.ERROR, Optional.of(lostDetail(id)))
                        : r);
      }
      context.store().dequeue(id);
      any = true;
    }
    if (any) {
      signal();
    }
  }

  static String lostDetail(String id) {
    return "The control plane holding this queued create stopped (restart or crash) before a slot"
        + " came free, so the request was lost and nothing was started; delete this sandbox and"
        + " create it again (reference: "
        + id
        + ")";
  }

  static SandboxException leftQueue(SandboxRecord record) {
    return new SandboxException(
        "sandbox "
            + record.id()
            + " left the start queue ("
            + record.status()
            + record.statusDetail().map(d -> ": " + d).orElse("")
            + "); nothing was started",
        Optional.of(record.id()));
  }

  static SandboxException deletedWhileQueued(String id) {
    return new SandboxException(
        "sandbox " + id + " was deleted while it waited in the start queue; nothing was started",
        Optional.of(id));
  }

  /**
   * Withdraws every create waiting here (each caller is told nothing was made), waits up to 10 s
   * for them to leave, and stops the lease thread.
   */
  @Override
  public void close() {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    lock.lock();
    try {
      closed = true;
      changed.signalAll();
      stopping.signalAll();
      long left = deadline - System.nanoTime();
      while (!waiters.isEmpty() && left > 0) {
        left = changed.awaitNanos(left);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      lock.unlock();
    }
    try {
      leases.join(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** How fast the queue moves here: an exponential average of the time between admissions. */
  private static final class AdmissionPace {
    private static final double WEIGHT = 0.3;
    private long lastNanos = -1; // guarded by this
    private double averageNanos = -1; // guarded by this

    synchronized void admitted() {
      long now = System.nanoTime();
      if (lastNanos >= 0) {
        double interval = now - lastNanos;
        averageNanos =
            averageNanos < 0 ? interval : WEIGHT * interval + (1 - WEIGHT) * averageNanos;
      }
      lastNanos = now;
    }

    synchronized Optional<Duration> expected(int position) {
      return averageNanos < 0
          ? Optional.empty()
          : Optional.of(Duration.ofNanos((long) (averageNanos * position)));
    }
  }
}
