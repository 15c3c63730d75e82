package dev.paddock.server.gateway;

import dev.paddock.store.StoreException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Auto-resume, one wake per sandbox at a time: the first request to a paused sandbox resumes it and
 * every request arriving meanwhile waits for that same resume instead of starting another. A waiter
 * gives up after {@code patience} (the resume goes on). Thread-safe: a concurrent map of wakes in
 * flight, each removed by the thread that ran it.
 */
final class Wakes {
  // The platform logger, as paddock-http's: the server binds it to the one log (SLF4J).
  private static final System.Logger LOG = System.getLogger("paddock.server");
  private final SandboxResumer resumer;
  private final Duration patience;
  private final Map<String, CompletableFuture<Void>> inFlight = new ConcurrentHashMap<>();

  Wakes(SandboxResumer resumer, Duration patience) {
    this.resumer = resumer;
    this.patience = patience;
  }

  /** How a wake ended for one waiting request. */
  enum Outcome {
    RESUMED,
    FAILED,
    STILL_RESUMING
  }

  /** The outcome, and why it failed when it did. */
  record Result(Outcome outcome, String reason) {}

  /** Resumes {@code sandboxId}, or joins the resume already under way; waits at most patience. */
  Result wake(String sandboxId) {
    CompletableFuture<Void> mine = new CompletableFuture<>();
    CompletableFuture<Void> running = inFlight.putIfAbsent(sandboxId, mine);
    if (running == null) {
      run(sandboxId, mine);
      running = mine;
    }
    return await(running);
  }

  private void run(String sandboxId, CompletableFuture<Void> wake) {
    Thread.ofVirtual()
        .name("paddock-gateway-wake")
        .start(
            () -> {
              try {
                resumer.resume(sandboxId);
                wake.complete(null);
              } catch (RuntimeException e) {
                wake.completeExceptionally(e);
              } finally {
                inFlight.remove(sandboxId, wake);
              }
            });
  }

  private Result await(CompletableFuture<Void> wake) {
    try {
      wake.get(patience.toMillis(), TimeUnit.MILLISECONDS);
      return new Result(Outcome.RESUMED, "");
    } catch (ExecutionException e) {
      return new Result(Outcome.FAILED, safeReason(e.getCause()));
    } catch (TimeoutException e) {
      return new Result(Outcome.STILL_RESUMING, "");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return new Result(Outcome.STILL_RESUMING, "");
    }
  }

  /**
   * What a caller may read of why a resume failed: the failure's message (the resumer's contract),
   * except a store failure's, which may name the database's host or the driver: that goes to the
   * log, the caller reads that the store is unavailable.
   */
  private static String safeReason(Throwable failure) {
    if (failure instanceof StoreException) {
      LOG.log(System.Logger.Level.WARNING, "auto_resume failed: " + failure.getMessage());
      return "the store is unavailable right now; try again";
    }
    return failure == null || failure.getMessage() == null ? "" : failure.getMessage();
  }
}
