package dev.paddock.controlplane;

import dev.paddock.api.Caller;
import dev.paddock.api.SandboxNotRunningException;
import dev.paddock.api.SandboxStats;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.SandboxUsage;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeStats;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.store.SandboxRecord;
import dev.paddock.store.SandboxStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalLong;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * {@link SandboxUsage} over the backend's one-shot {@link SandboxBackend#stats} readings. Current
 * CPU use is the difference to the sandbox's previous reading (kept here, one per sandbox, dropped
 * when it stops running or is not read for {@link #FORGET_AFTER}). Thread-safe: the previous
 * readings are in a concurrent map; {@link #running} reads on virtual threads, at most {@link
 * #PARALLEL} at once.
 */
final class UsageReader implements SandboxUsage {
  /** Readings closer than this give no new rate: the previous rate is reported again. */
  private static final Duration MIN_RATE_GAP = Duration.ofMillis(200);

  /** A previous reading older than this says nothing about "now". */
  private static final Duration MAX_RATE_GAP = Duration.ofMinutes(2);

  private static final Duration FORGET_AFTER = Duration.ofMinutes(10);
  private static final int PARALLEL = 16;
  private static final Duration RUNNING_DEADLINE = Duration.ofSeconds(2);
  private static final String WHAT = "stats are read from a running sandbox";

  private record Previous(RuntimeStats reading, OptionalDouble percent) {}

  private final SandboxStore store;
  private final SandboxBackend backend;
  private final ConcurrentMap<String, Previous> previous = new ConcurrentHashMap<>();
  private final Semaphore parallel = new Semaphore(PARALLEL);

  UsageReader(SandboxStore store, SandboxBackend backend) {
    this.store = store;
    this.backend = backend;
  }

  @Override
  public Optional<SandboxStats> stats(Caller caller, String sandboxId) {
    Optional<SandboxRecord> record =
        store.find(sandboxId).filter(r -> caller.mayAccess(r.ownerUserId()));
    if (record.isEmpty()) {
      previous.remove(sandboxId);
      return Optional.empty();
    }
    SandboxRecord r = record.get();
    if (r.status() != SandboxStatus.RUNNING || r.runtime().isEmpty()) {
      previous.remove(sandboxId);
      throw new SandboxNotRunningException(sandboxId, r.status(), WHAT);
    }
    return Optional.of(read(sandboxId, r.runtime().get()));
  }

  /** A reading; when the backend has none, asks whether the runtime still runs. */
  private SandboxStats read(String sandboxId, RuntimeHandle runtime) {
    Optional<RuntimeStats> reading = backend.stats(runtime);
    if (reading.isPresent()) {
      return view(sandboxId, reading.get());
    }
    SandboxStatus now = backend.inspect(runtime).status();
    if (now != SandboxStatus.RUNNING) {
      previous.remove(sandboxId);
      throw new SandboxNotRunningException(sandboxId, now, WHAT);
    }
    return unreadable(sandboxId); // this backend cannot read its runtimes' use
  }

  @Override
  public List<SandboxStats> running(int max) {
    List<SandboxRecord> records =
        store.withStatus(List.of(SandboxStatus.RUNNING)).stream()
            .filter(r -> r.runtime().isPresent())
            .sorted(Comparator.comparing(SandboxRecord::createdAt))
            .limit(Math.max(0, max))
            .toList();
    forgetAllBut(records);
    List<SandboxStats> readings = new ArrayList<>();
    try (ExecutorService readers = Executors.newVirtualThreadPerTaskExecutor()) {
      List<Future<Optional<RuntimeStats>>> pending = new ArrayList<>();
      for (SandboxRecord record : records) {
        pending.add(readers.submit(limited(() -> backend.stats(record.runtime().get()))));
      }
      long deadline = System.nanoTime() + RUNNING_DEADLINE.toNanos();
      for (int i = 0; i < records.size(); i++) {
        String id = records.get(i).id();
        waitFor(pending.get(i), deadline).ifPresent(s -> readings.add(view(id, s)));
      }
      readers.shutdownNow(); // a runtime that did not answer in time is left out
    }
    return readings;
  }

  private <T> Callable<T> limited(Callable<T> task) {
    return () -> {
      parallel.acquire();
      try {
        return task.call();
      } finally {
        parallel.release();
      }
    };
  }

  private static Optional<RuntimeStats> waitFor(
      Future<Optional<RuntimeStats>> reading, long deadline) {
    try {
      return reading.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Optional.empty();
    } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
      return Optional.empty();
    }
  }

  private void forgetAllBut(List<SandboxRecord> running) {
    java.util.Set<String> ids = new java.util.HashSet<>();
    running.forEach(r -> ids.add(r.id()));
    previous.keySet().retainAll(ids);
  }

  private SandboxStats view(String sandboxId, RuntimeStats reading) {
    OptionalDouble percent = percent(sandboxId, reading);
    if (previous.size() > 1024) {
      Instant old = reading.readAt().minus(FORGET_AFTER);
      previous.values().removeIf(p -> p.reading().readAt().isBefore(old));
    }
    return new SandboxStats(
        sandboxId,
        reading.readAt(),
        OptionalDouble.of(reading.cpuSeconds()),
        percent,
        OptionalLong.of(reading.memoryBytes()),
        reading.memoryPeakBytes(),
        OptionalLong.of(reading.pids()),
        reading.diskBytes(),
        reading.networkRxBytes(),
        reading.networkTxBytes());
  }

  /** CPU use since the previous reading, percent of one core; remembers this reading. */
  private OptionalDouble percent(String sandboxId, RuntimeStats reading) {
    Previous result =
        previous.compute(
            sandboxId,
            (id, before) -> {
              if (before == null) {
                return new Previous(reading, OptionalDouble.empty());
              }
              Duration gap = Duration.between(before.reading().readAt(), reading.readAt());
              if (gap.compareTo(MIN_RATE_GAP) < 0) {
                return before; // too close to measure: the last rate stands
              }
              if (gap.compareTo(MAX_RATE_GAP) > 0) {
                return new Previous(reading, OptionalDouble.empty());
              }
              double used = reading.cpuSeconds() - before.reading().cpuSeconds();
              double rate = Math.max(0, used) / (gap.toNanos() / 1e9) * 100;
              return new Previous(reading, OptionalDouble.of(rate));
            });
    return result.percent();
  }

  private static SandboxStats unreadable(String sandboxId) {
    return new SandboxStats(
        sandboxId,
        Instant.now(),
        OptionalDouble.empty(),
        OptionalDouble.empty(),
        OptionalLong.empty(),
        OptionalLong.empty(),
        OptionalLong.empty(),
        OptionalLong.empty(),
        OptionalLong.empty(),
        OptionalLong.empty());
  }
}
