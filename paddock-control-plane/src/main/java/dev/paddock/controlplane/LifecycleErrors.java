package dev.paddock.controlplane;

import dev.paddock.api.SandboxException;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.store.SandboxRecord;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The failures lifecycle operations share: the errors they throw (wrong status, no runtime, not
 * found) and the recording of a failed start or resume (ERROR with a safe detail, key revoked).
 */
final class LifecycleErrors {
  private static final Logger LOG = LoggerFactory.getLogger(LifecycleErrors.class);

  private final SandboxRecords records;
  private final SandboxBackend backend;
  private final ControlPlaneConfig config;

  LifecycleErrors(SandboxRecords records, SandboxBackend backend, ControlPlaneConfig config) {
    this.records = records;
    this.backend = backend;
    this.config = config;
  }

  /** Records a failed start or resume: ERROR with its safe detail, key revoked. Never throws. */
  void recordStartFailure(String id, RuntimeFailure failure, Throwable cause) {
    config.events().startFailed(id, failure.kind());
    LOG.warn("sandbox {} failed to start ({}): {}", id, failure.kind(), failure.rawDetail(), cause);
    try {
      records.change(
          id,
          r ->
              r.withSessionKeyHash(none())
                  .withStatus(SandboxStatus.ERROR, Optional.of(StartFailures.detail(failure, id))));
    } catch (RuntimeException e) {
      // The next reconcile marks it failed (STARTING without a runtime, past the start timeout).
      LOG.error("cannot record the start failure of sandbox {}", id, e);
    }
  }

  /** Destroys a runtime nothing refers to any more; failures are logged, {@code why} attached. */
  void destroyQuietly(RuntimeHandle handle, Optional<Throwable> why) {
    try {
      backend.destroy(handle);
    } catch (RuntimeException e) {
      why.ifPresent(e::addSuppressed);
      LOG.error("cannot destroy the runtime of sandbox {}", handle.sandboxId(), e);
    }
  }

  static SandboxRecord requireStatus(SandboxRecord record, SandboxStatus wanted, String what) {
    if (record.status() != wanted) {
      throw new SandboxException(
          "sandbox "
              + record.id()
              + " is "
              + record.status()
              + " and cannot be "
              + what
              + (record.status() == SandboxStatus.STARTING
                  ? "; wait until it is running"
                  : "; delete it and start a new one"),
          Optional.of(record.id()));
    }
    return record;
  }

  static RuntimeHandle requireRuntime(SandboxRecord record) {
    return record
        .runtime()
        .orElseThrow(
            () ->
                new SandboxException(
                    "sandbox " + record.id() + " has no runtime; delete it and start a new one",
                    Optional.of(record.id())));
  }

  static SandboxException notFound(String id) {
    return new SandboxException("sandbox " + id + " not found", Optional.of(id));
  }

  static Optional<String> none() {
    return Optional.empty();
  }
}
