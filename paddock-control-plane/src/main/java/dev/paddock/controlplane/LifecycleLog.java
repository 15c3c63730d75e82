package dev.paddock.controlplane;

import dev.paddock.api.Caller;
import dev.paddock.api.LifetimeAction;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.store.SandboxRecord;
import dev.paddock.store.SandboxStore;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.spi.LoggingEventBuilder;

/**
 * One INFO line per lifecycle change, on the logger {@code paddock.lifecycle}, with the same
 * structured fields every time: {@code op}, {@code sandbox_id}, {@code user_id} (who asked; {@code
 * -} for the control plane itself), {@code spec_id}, {@code outcome}, {@code duration_ms}. The only
 * place lifecycle lines are written: around the service's operations, and (as the {@link
 * SandboxEvents} the lifecycle reports to) when a start ends in the background. Never logs a key.
 * Thread-safe.
 */
final class LifecycleLog implements SandboxEvents {
  private static final Logger LOG = LoggerFactory.getLogger("paddock.lifecycle");

  private final SandboxStore store;
  private final SandboxEvents next;

  /** Logs, then passes each event on to {@code next} (e.g. metrics). */
  LifecycleLog(SandboxStore store, SandboxEvents next) {
    this.store = store;
    this.next = next;
  }

  /**
   * Runs {@code action} and logs it: {@code outcome} names what came of it, an exception is logged
   * as {@code failed} with its type and rethrown.
   *
   * @param sandbox the sandbox acted on as stored before, empty when not (yet) known
   */
  <T> T around(
      String op,
      Caller caller,
      String sandboxId,
      Optional<SandboxRecord> sandbox,
      Supplier<T> action,
      Function<T, String> outcome) {
    long began = System.nanoTime();
    try {
      T result = action.get();
      line(op, caller, sandboxId, sandbox.map(SandboxRecord::specId), began)
          .addKeyValue("outcome", outcome.apply(result))
          .log("{} {}: {}", op, sandboxId, outcome.apply(result));
      return result;
    } catch (RuntimeException e) {
      line(op, caller, sandboxId, sandbox.map(SandboxRecord::specId), began)
          .addKeyValue("outcome", "failed")
          .addKeyValue("error", e.getClass().getSimpleName())
          .log("{} {}: failed ({})", op, sandboxId, e.getClass().getSimpleName());
      throw e;
    }
  }

  /** Logs a start request: accepted (the sandbox STARTING, its outcome logged later) or refused. */
  SandboxInfo start(Caller caller, Optional<String> specId, Supplier<SandboxInfo> action) {
    long began = System.nanoTime();
    try {
      SandboxInfo started = action.get();
      line("start", caller, started.id(), Optional.of(started.sandboxSpecId()), began)
          .addKeyValue("outcome", "starting")
          .log("start {}: starting", started.id());
      next.created(started);
      return started;
    } catch (RuntimeException e) {
      line("start", caller, "-", specId, began)
          .addKeyValue("outcome", "failed")
          .addKeyValue("error", e.getClass().getSimpleName())
          .log("start: failed ({})", e.getClass().getSimpleName());
      throw e;
    }
  }

  /** {@code ok}, or {@code not_found} for a sandbox the caller may not see (nothing was done). */
  static String okOrNotFound(boolean found) {
    return found ? "ok" : "not_found";
  }

  @Override
  public void started(String sandboxId, Duration took) {
    try {
      background("running", sandboxId, took.toMillis()).log("start {}: running", sandboxId);
    } finally {
      next.started(sandboxId, took);
    }
  }

  @Override
  public void startFailed(String sandboxId, RuntimeFailure.Kind kind) {
    try {
      background("failed", sandboxId, -1)
          .addKeyValue("error", kind.id())
          .log("start {}: failed ({})", sandboxId, kind);
    } finally {
      next.startFailed(sandboxId, kind);
    }
  }

  @Override
  public void queueAdmitted(String sandboxId, Duration waited) {
    next.queueAdmitted(sandboxId, waited);
  }

  @Override
  public void queueTimedOut(String sandboxId, Duration waited) {
    next.queueTimedOut(sandboxId, waited);
  }

  // The other events are logged around the operations above; they pass on unchanged.

  @Override
  public void paused(String sandboxId) {
    next.paused(sandboxId);
  }

  @Override
  public void resumed(String sandboxId) {
    next.resumed(sandboxId);
  }

  @Override
  public void archived(String sandboxId) {
    next.archived(sandboxId);
  }

  @Override
  public void deleting(String sandboxId, RuntimeHandle runtime) {
    next.deleting(sandboxId, runtime);
  }

  @Override
  public void deleted(String sandboxId) {
    next.deleted(sandboxId);
  }

  @Override
  public void lifetimeEnded(String sandboxId, String reason, LifetimeAction action) {
    next.lifetimeEnded(sandboxId, reason, action);
  }

  private LoggingEventBuilder background(String outcome, String sandboxId, long tookMillis) {
    Optional<SandboxRecord> record = Optional.empty();
    try {
      record = store.find(sandboxId);
    } catch (RuntimeException e) {
      // The line is still worth writing without the owner and spec.
    }
    LoggingEventBuilder line =
        LOG.atInfo()
            .addKeyValue("op", "start")
            .addKeyValue("sandbox_id", sandboxId)
            .addKeyValue("user_id", record.flatMap(SandboxRecord::ownerUserId).orElse("-"))
            .addKeyValue("spec_id", record.map(SandboxRecord::specId).orElse("-"))
            .addKeyValue("outcome", outcome);
    return tookMillis >= 0 ? line.addKeyValue("duration_ms", tookMillis) : line;
  }

  private static LoggingEventBuilder line(
      String op, Caller caller, String sandboxId, Optional<String> specId, long began) {
    return LOG.atInfo()
        .addKeyValue("op", op)
        .addKeyValue("sandbox_id", sandboxId)
        .addKeyValue("user_id", caller.userId().orElse("-"))
        .addKeyValue("admin", caller.admin())
        .addKeyValue("spec_id", specId.orElse("-"))
        .addKeyValue("duration_ms", (System.nanoTime() - began) / 1_000_000);
  }
}
