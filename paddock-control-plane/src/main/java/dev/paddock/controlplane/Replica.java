package dev.paddock.controlplane;

import dev.paddock.store.SandboxStore;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * This control plane as one replica among those sharing its store: its heartbeat (renewed every
 * third of the lease on the {@code paddock-heartbeat} thread), and the background lease, which
 * makes the background work (reconcile, lifetimes, taking over what dead replicas left) run on one
 * replica at a time. The lease is renewed with the heartbeat while this replica holds it, so a pass
 * longer than the lease keeps it; a replica that dies loses it one lease later.
 */
final class Replica implements AutoCloseable {
  private static final Logger LOG = LoggerFactory.getLogger(Replica.class);
  static final String BACKGROUND_LEASE = "background";

  private final SandboxStore store;
  private final String id;
  private final Duration lease;
  private final Thread heartbeat;
  // Written by passes and the heartbeat thread; read by both.
  private volatile boolean leading;
  private volatile boolean closed;

  private Replica(SandboxStore store, String id, Duration lease) {
    this.store = store;
    this.id = id;
    this.lease = lease;
    this.heartbeat = Thread.ofPlatform().daemon().name("paddock-heartbeat").unstarted(this::beat);
  }

  /** Records the first heartbeat (so this replica is live before it acts), then keeps beating. */
  static Replica join(SandboxStore store, ControlPlaneConfig config) {
    Replica replica = new Replica(store, config.replicaId(), config.replicaLease());
    store.heartbeat(replica.id, replica.lease);
    replica.heartbeat.start();
    return replica;
  }

  String id() {
    return id;
  }

  /** The replicas whose heartbeat has not lapsed (this one included while it runs). */
  Set<String> live() {
    return store.liveReplicas();
  }

  /** Takes (or renews) the background lease; true when this replica holds it now. */
  boolean lead() {
    leading = store.tryLease(BACKGROUND_LEASE, id, lease);
    return leading;
  }

  private void beat() {
    long every = lease.toNanos() / 3;
    while (!closed) {
      LockSupport.parkNanos(every);
      if (closed || Thread.interrupted()) {
        return;
      }
      try {
        store.heartbeat(id, lease);
        if (leading) {
          leading = store.tryLease(BACKGROUND_LEASE, id, lease);
        }
      } catch (RuntimeException e) {
        LOG.warn("replica {}: heartbeat failed; the next one retries", id, e);
      }
    }
  }

  /** Stops beating and retires: its lease is released, so another replica leads at once. */
  @Override
  public void close() {
    closed = true;
    heartbeat.interrupt();
    try {
      heartbeat.join(Duration.ofSeconds(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      store.retireReplica(id);
    } catch (RuntimeException e) {
      LOG.warn("replica {}: cannot retire; its heartbeat and lease lapse on their own", id, e);
    }
  }
}
