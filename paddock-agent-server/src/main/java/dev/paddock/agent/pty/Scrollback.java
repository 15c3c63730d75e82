package dev.paddock.agent.pty;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A terminal's output: a bounded ring of its most recent bytes, addressed by absolute offsets (byte
 * 0 is the first the terminal ever wrote), so a viewer that reattaches with the offset it had
 * reached gets exactly the rest, and one that fell behind by more than the ring learns how many
 * bytes it lost. The ring grows on demand up to its capacity, so a quiet terminal costs little.
 *
 * <p>Thread-safe: one writer (the pump) and any number of readers, which may block in {@link
 * #await} until new output arrives or the terminal ends.
 */
final class Scrollback {
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final int capacity;

  // Guarded by lock.
  private byte[] ring = new byte[4096];
  private long end;
  private boolean ended;

  Scrollback(int capacity) {
    this.capacity = capacity;
  }

  /**
   * A slice of output: {@code skipped} bytes were lost before {@code from}; then {@code length}.
   */
  record Slice(long from, int length, long skipped, boolean ended) {
    long next() {
      return from + length;
    }
  }

  void append(byte[] data, int offset, int length) {
    lock.lock();
    try {
      grow(length);
      for (int copied = 0; copied < length; ) {
        int at = (int) ((end + copied) % ring.length);
        int n = Math.min(length - copied, ring.length - at);
        System.arraycopy(data, offset + copied, ring, at, n);
        copied += n;
      }
      end += length;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** Grows the ring (keeping its contents at their offsets) towards capacity. */
  private void grow(int incoming) {
    long wanted = Math.min(capacity, Math.min(end, capacity) + incoming);
    if (wanted <= ring.length) {
      return;
    }
    int size = ring.length;
    while (size < wanted) {
      size = Math.min(capacity, size * 2);
    }
    byte[] bigger = new byte[size];
    for (long at = start(); at < end; at++) {
      bigger[(int) (at % size)] = ring[(int) (at % ring.length)];
    }
    ring = bigger;
  }

  /** Marks the output complete: waiting readers wake and see {@link Slice#ended()}. */
  void finish() {
    lock.lock();
    try {
      ended = true;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** The offset after the last byte written. */
  long end() {
    lock.lock();
    try {
      return end;
    } finally {
      lock.unlock();
    }
  }

  /** The oldest offset still held. */
  long start() {
    lock.lock();
    try {
      return Math.max(0, end - ring.length);
    } finally {
      lock.unlock();
    }
  }

  /** Copies what is held from {@code from} on into {@code into}, without waiting. */
  Slice read(long from, byte[] into) {
    lock.lock();
    try {
      long first = Math.max(Math.min(from, end), Math.max(0, end - ring.length));
      int n = (int) Math.min(into.length, end - first);
      for (int copied = 0; copied < n; ) {
        int at = (int) ((first + copied) % ring.length);
        int chunk = Math.min(n - copied, ring.length - at);
        System.arraycopy(ring, at, into, copied, chunk);
        copied += chunk;
      }
      return new Slice(first, n, Math.max(0, first - from), ended && first + n == end);
    } finally {
      lock.unlock();
    }
  }

  /**
   * Waits until there is output past {@code from} or the output has ended, then reads as {@link
   * #read} does.
   */
  Slice await(long from, byte[] into) throws InterruptedException {
    lock.lock();
    try {
      while (end <= from && !ended) {
        changed.await(1, TimeUnit.MINUTES);
      }
      return read(from, into);
    } finally {
      lock.unlock();
    }
  }
}
