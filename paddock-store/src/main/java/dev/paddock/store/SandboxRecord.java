package dev.paddock.store;

import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.RuntimeHandle;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * A sandbox as the store keeps it. Never holds a session key, only its SHA-256 hex digest.
 *
 * @param id sandbox id
 * @param ownerUserId the user who created it
 * @param specId the spec
 * @param status the last status the control plane recorded (the runtime is the truth; this is what
 *     survives a restart)
 * @param sessionKeyHash SHA-256 hex of the current session key; empty when revoked
 * @param runtime how the backend finds its runtime; empty before the backend created it
 * @param statusDetail safe explanation (e.g. a start failure's message with its reference)
 * @param createdAt creation time
 * @param updatedAt last change
 * @param version optimistic-lock counter, bumped by every update
 */
public record SandboxRecord(
    String id,
    Optional<String> ownerUserId,
    String specId,
    SandboxStatus status,
    Optional<String> sessionKeyHash,
    Optional<RuntimeHandle> runtime,
    Optional<String> statusDetail,
    Instant createdAt,
    Instant updatedAt,
    long version) {
  public SandboxRecord {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(ownerUserId, "ownerUserId");
    Objects.requireNonNull(specId, "specId");
    Objects.requireNonNull(status, "status");
    Objects.requireNonNull(sessionKeyHash, "sessionKeyHash");
    Objects.requireNonNull(runtime, "runtime");
    Objects.requireNonNull(statusDetail, "statusDetail");
    Objects.requireNonNull(createdAt, "createdAt");
    Objects.requireNonNull(updatedAt, "updatedAt");
  }

  public SandboxRecord withStatus(SandboxStatus newStatus, Optional<String> detail) {
    return new SandboxRecord(
        id,
        ownerUserId,
        specId,
        newStatus,
        sessionKeyHash,
        runtime,
        detail,
        createdAt,
        updatedAt,
        version);
  }

  public SandboxRecord withSessionKeyHash(Optional<String> hash) {
    return new SandboxRecord(
        id,
        ownerUserId,
        specId,
        status,
        hash,
        runtime,
        statusDetail,
        createdAt,
        updatedAt,
        version);
  }

  public SandboxRecord withRuntime(Optional<RuntimeHandle> handle) {
    return new SandboxRecord(
        id,
        ownerUserId,
        specId,
        status,
        sessionKeyHash,
        handle,
        statusDetail,
        createdAt,
        updatedAt,
        version);
  }
}
