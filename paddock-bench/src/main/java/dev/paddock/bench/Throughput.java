package dev.paddock.bench;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Operations per second with several threads at once. Each thread opens its own {@link Worker},
 * warms it up, then all start together; the clock runs from that start until the last thread
 * finishes. Threads are platform threads, one per worker.
 */
final class Throughput {
  private Throughput() {}

  /** One thread's repeated operation and whatever it holds open (a connection, say). */
  interface Worker extends AutoCloseable {
    void once() throws Exception;

    @Override
    default void close() throws IOException {}
  }

  /** Opens a worker; called once on each thread. */
  @FunctionalInterface
  interface WorkerFactory {
    Worker open() throws Exception;
  }

  /** Operations per second over {@code threads × perThread} operations after the warm-ups. */
  static double perSecond(int threads, int perThread, int warmup, WorkerFactory factory)
      throws InterruptedException, ExecutionException {
    CountDownLatch warm = new CountDownLatch(threads);
    CountDownLatch go = new CountDownLatch(1);
    try (ExecutorService pool = Executors.newFixedThreadPool(threads)) {
      List<Future<?>> done = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        done.add(pool.submit(() -> run(factory, warmup, perThread, warm, go)));
      }
      warm.await();
      long start = System.nanoTime();
      go.countDown();
      for (Future<?> f : done) {
        f.get();
      }
      double seconds = (System.nanoTime() - start) / 1e9;
      return threads * perThread / seconds;
    }
  }

  private static Void run(
      WorkerFactory factory, int warmup, int count, CountDownLatch warm, CountDownLatch go)
      throws Exception {
    boolean counted = false;
    try (Worker worker = factory.open()) {
      for (int i = 0; i < warmup; i++) {
        worker.once();
      }
      warm.countDown();
      counted = true;
      go.await();
      for (int i = 0; i < count; i++) {
        worker.once();
      }
    } finally {
      // A worker that failed while warming up must not leave the start waiting for it forever.
      if (!counted) {
        warm.countDown();
      }
    }
    return null;
  }
}
