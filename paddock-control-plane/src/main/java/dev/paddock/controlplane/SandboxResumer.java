package dev.paddock.controlplane;

import static dev.paddock.controlplane.LifecycleErrors.none;

import dev.paddock.api.KeyDigest;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxStartException;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeFailure.Kind;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeStartException;
import dev.paddock.api.spi.RuntimeState;
import dev.paddock.store.SandboxOperation;
import dev.paddock.store.SandboxRecord;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.UnaryOperator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Resumes paused sandboxes, and sandboxes whose runtime died (it is restarted on its workspace):
 * admits the resume against capacity, thaws (or restarts) the runtime, makes its agent take a new
 * session key, and records it RUNNING. An agent that does not take the new key is frozen again and
 * the sandbox ends in ERROR: it may still accept an old key.
 */
final class SandboxResumer {
  private static final Logger LOG = LoggerFactory.getLogger(SandboxResumer.class);

  private final LifecycleContext context;
  private final Capacity capacity;

  SandboxResumer(LifecycleContext context, Capacity capacity) {
    this.context = context;
    this.capacity = capacity;
  }

  /** Resumes a sandbox the caller may see; RUNNING is returned as it is, without a key. */
  SandboxInfo resume(String id) {
    try (SandboxPermits.Permit permit =
        context.awaitClaim(id, SandboxOperation.Kind.RESUME, "resumed")) {
      SandboxRecord record =
          context.store().find(permit.sandboxId()).orElseThrow(() -> LifecycleErrors.notFound(id));
      boolean died = runtimeDied(record);
      if (record.status() == SandboxStatus.RUNNING && !died) {
        return context.views().live(record);
      }
      if (!died) {
        LifecycleErrors.requireStatus(record, SandboxStatus.PAUSED, "resumed");
      }
      CompletableFuture<Void> done = context.inFlight().begin(id);
      try {
        return resumeHeld(record);
      } finally {
        context.inFlight().end(id, done);
      }
    }
  }

  /**
   * Whether the sandbox's runtime still exists but stopped (killed, crashed, OOM-killed): its
   * workspace is kept, so a resume restarts it there with a new key, whatever the stored status
   * (RUNNING until the reconcile loop sees the death, ERROR after). An engine that cannot be
   * reached is not a death.
   */
  private boolean runtimeDied(SandboxRecord record) {
    if (record.runtime().isEmpty() || record.status() == SandboxStatus.PAUSED) {
      return false;
    }
    RuntimeState live = context.views().inspect(record.runtime().get(), record.status());
    return live.status() == SandboxStatus.ERROR
        && live.failure().map(f -> !f.kind().equals(Kind.ENGINE_UNREACHABLE)).orElse(false);
  }

  private SandboxInfo resumeHeld(SandboxRecord paused) {
    String id = paused.id();
    capacity.admit(
        paused.ownerUserId(),
        id,
        () -> context.records().change(id, r -> r.withStatus(SandboxStatus.STARTING, none())));
    long generation = paused.keyGeneration() + 1;
    String key = context.keys().sessionKey(id, generation);
    String keyHash = KeyDigest.sha256Hex(key);
    RuntimeHandle handle;
    if (LifecycleErrors.requireRuntime(paused).launchKeyed()) {
      // Its agent takes a key only at launch: a new runtime on the same workspace, with the new
      // key.
      handle = thaw(paused, runtime -> context.backend().relaunch(runtime, key));
    } else {
      handle = thaw(paused, context.backend()::resume);
      try {
        context.keys().rotate(handle, List.of(keyHash));
      } catch (RuntimeException e) {
        return keyNotTaken(id, handle, e);
      }
    }
    SandboxRecord running =
        context
            .records()
            .change(
                id,
                r ->
                    resumedLifetime(context.claims().ended(r))
                        .withRuntime(Optional.of(handle))
                        .withKey(generation, Optional.of(keyHash))
                        .withStatus(SandboxStatus.RUNNING, none()))
            .orElseThrow(() -> LifecycleErrors.notFound(id));
    return context.views().issued(running, context.views().live(running).exposedUrls(), key);
  }

  /**
   * A resume is activity, and a sandbox paused by its timeout gets its lifetime again (E2B's
   * resume), so neither lifetime fires at once.
   */
  private SandboxRecord resumedLifetime(SandboxRecord record) {
    Instant now = context.config().clock().instant();
    return record
        .withTimeoutAt(record.timeoutAt().or(() -> record.settings().timeout().map(now::plus)))
        .withLastActivityAt(Optional.of(now));
  }

  private RuntimeHandle thaw(SandboxRecord paused, UnaryOperator<RuntimeHandle> backendCall) {
    String id = paused.id();
    try {
      return backendCall.apply(LifecycleErrors.requireRuntime(paused));
    } catch (RuntimeStartException e) {
      context.errors().recordStartFailure(id, e.failure(), e);
      throw new SandboxStartException(
          e.failure().safeMessage(),
          id,
          e.failure().kind().equals(RuntimeFailure.Kind.ENGINE_UNREACHABLE));
    } catch (RuntimeException e) {
      context.errors().recordStartFailure(id, SandboxStarter.unknown(e), e);
      throw new SandboxStartException(RuntimeFailure.Kind.UNKNOWN.safeMessage(), id);
    }
  }

  // The agent may still accept an old key: freeze it again and fail, rather than run it so.
  private SandboxInfo keyNotTaken(String id, RuntimeHandle handle, RuntimeException cause) {
    LOG.warn("sandbox {}: the resumed agent did not take its new key", id, cause);
    try {
      context.backend().pause(handle);
    } catch (RuntimeException e) {
      LOG.warn("sandbox {}: cannot freeze it again after the failed key rotation", id, e);
    }
    context
        .records()
        .change(
            id,
            r ->
                r.withRuntime(Optional.of(handle))
                    .withSessionKeyHash(none())
                    .withStatus(
                        SandboxStatus.ERROR,
                        Optional.of(StartFailures.detail(StartFailures.KEY_NOT_TAKEN, id))));
    throw new SandboxStartException(StartFailures.KEY_NOT_TAKEN, id);
  }
}
