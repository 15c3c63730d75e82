package dev.paddock.controlplane;

import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.SandboxAgent;
import dev.paddock.store.SandboxRecord;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * With the initial snapshot on, archives each fresh workspace (phase {@code initial}) on its own
 * virtual thread, without the permit: the start is reported at once and nothing waits for the
 * snapshot. It is begun before the start is reported, so it normally reads the workspace before the
 * first setup command; a command racing the tar walk may show up in it.
 */
final class InitialSnapshots {
  private static final Logger LOG = LoggerFactory.getLogger(InitialSnapshots.class);

  private final LifecycleContext context;
  private final Optional<WorkspaceArchiver> archiver;

  /** Snapshots under way (virtual threads; each removes itself when it ends). */
  private final Set<Thread> running = ConcurrentHashMap.newKeySet();

  InitialSnapshots(LifecycleContext context, Optional<WorkspaceArchiver> archiver) {
    this.context = context;
    this.archiver = archiver;
  }

  void begin(String id, RuntimeHandle handle) {
    if (archiver.isEmpty() || !context.config().archives().initialSnapshot()) {
      return;
    }
    Thread thread =
        Thread.ofVirtual().name("paddock-snapshot-" + id).unstarted(() -> capture(id, handle));
    running.add(thread);
    thread.start();
  }

  private void capture(String id, RuntimeHandle handle) {
    try {
      Optional<SandboxRecord> record = context.store().find(id);
      Optional<SandboxAgent> agent = context.keys().agent(handle);
      if (record.isEmpty() || agent.isEmpty()) {
        LOG.info("sandbox {}: gone or not answering before its initial snapshot", id);
        return;
      }
      archiver
          .orElseThrow()
          .capture(
              new WorkspaceArchiver.Source(
                  id, record.get().ownerUserId(), Optional.empty(), agent.get()),
              WorkspaceArchiver.Phase.INITIAL,
              context.config().archives().initialDeadline());
    } catch (RuntimeException e) {
      LOG.warn("sandbox {}: initial snapshot failed (the sandbox runs on): {}", id, e.toString());
    } finally {
      running.remove(Thread.currentThread());
    }
  }

  /** Interrupts the snapshots under way and waits up to 10 s for them to end. */
  void close() {
    long end = System.nanoTime() + Duration.ofSeconds(10).toNanos();
    for (Thread thread : List.copyOf(running)) {
      thread.interrupt();
      try {
        thread.join(Duration.ofNanos(Math.max(1, end - System.nanoTime())));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }
}
