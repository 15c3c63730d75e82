package dev.paddock.controlplane;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Starts and resumes under way in this control plane, each completed when it ends either way, so
 * waiters and {@code close} need not poll. Thread-safe.
 */
final class InFlight {
  private final Map<String, CompletableFuture<Void>> running = new ConcurrentHashMap<>();

  /** Registers a start or resume of {@code sandboxId}; end it with {@link #end}. */
  CompletableFuture<Void> begin(String sandboxId) {
    CompletableFuture<Void> done = new CompletableFuture<>();
    running.put(sandboxId, done);
    return done;
  }

  void end(String sandboxId, CompletableFuture<Void> done) {
    running.remove(sandboxId, done);
    done.complete(null);
  }

  Optional<CompletableFuture<Void>> of(String sandboxId) {
    return Optional.ofNullable(running.get(sandboxId));
  }

  List<CompletableFuture<Void>> all() {
    return List.copyOf(running.values());
  }
}
