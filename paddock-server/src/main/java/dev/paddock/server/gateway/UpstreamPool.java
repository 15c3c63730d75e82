package dev.paddock.server.gateway;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Idle keep-alive connections to sandbox ports, at most {@code perAddress} per address, each kept
 * at most {@code idleNanos}. A connection whose peer closed it while idle is found out on reuse
 * (the forwarder then retries a body-less request once on a new connection). Thread-safe: one lock
 * guards the map, never held during I/O.
 */
final class UpstreamPool implements AutoCloseable {
  private final int perAddress;
  private final long idleNanos;
  private final int connectMillis;
  private final ReentrantLock lock = new ReentrantLock();
  private final Map<InetSocketAddress, Deque<Upstream>> idle = new HashMap<>(); // guarded by lock
  private boolean closed; // guarded by lock

  UpstreamPool(int perAddress, long idleNanos, int connectMillis) {
    this.perAddress = perAddress;
    this.idleNanos = idleNanos;
    this.connectMillis = connectMillis;
  }

  /** An idle connection to {@code address}, else a new one. */
  Upstream acquire(InetSocketAddress address) throws IOException {
    Upstream pooled = takeIdle(address);
    return pooled != null ? pooled.reusedNow() : Upstream.connect(address, connectMillis);
  }

  /** A connection that was never used before (upgrades: the socket leaves the pool for good). */
  Upstream fresh(InetSocketAddress address) throws IOException {
    return Upstream.connect(address, connectMillis);
  }

  private Upstream takeIdle(InetSocketAddress address) {
    long now = System.nanoTime();
    lock.lock();
    try {
      Deque<Upstream> queue = idle.get(address);
      while (queue != null && !queue.isEmpty()) {
        Upstream candidate = queue.pollLast(); // the most recent is the least likely closed
        if (now - candidate.idleSince() < idleNanos && !candidate.isClosed()) {
          return candidate;
        }
        candidate.close();
      }
      return null;
    } finally {
      lock.unlock();
    }
  }

  /** Keeps {@code upstream} for reuse, or closes it when the pool for its address is full. */
  void release(Upstream upstream) {
    upstream.idleSince(System.nanoTime());
    Upstream evicted = null;
    lock.lock();
    try {
      if (closed || perAddress == 0) {
        evicted = upstream;
      } else {
        Deque<Upstream> queue = idle.computeIfAbsent(upstream.address, a -> new ArrayDeque<>());
        queue.addLast(upstream);
        if (queue.size() > perAddress) {
          evicted = queue.pollFirst();
        }
        evictExpired();
      }
    } finally {
      lock.unlock();
    }
    if (evicted != null) {
      evicted.close();
    }
  }

  /** Drops addresses whose connections all expired, so ports of gone sandboxes do not pile up. */
  private void evictExpired() {
    long now = System.nanoTime();
    idle.values()
        .forEach(
            queue -> {
              while (!queue.isEmpty() && now - queue.peekFirst().idleSince() >= idleNanos) {
                queue.pollFirst().close();
              }
            });
    idle.values().removeIf(Deque::isEmpty);
  }

  @Override
  public void close() {
    lock.lock();
    try {
      closed = true;
      idle.values().forEach(queue -> queue.forEach(Upstream::close));
      idle.clear();
    } finally {
      lock.unlock();
    }
  }
}
