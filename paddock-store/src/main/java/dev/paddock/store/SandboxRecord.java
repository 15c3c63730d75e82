package dev.paddock.store;

import dev.paddock.api.SandboxSettings;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.RuntimeHandle;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * A sandbox as the store keeps it. Never holds a session key, only its SHA-256 hex digest and the
 * generation it was derived for (useless without the control plane's master secret).
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
 * @param settings what it was created with (image, labels, resources, working dir, lifetimes)
 * @param timeoutAt when its lifetime ends; empty: never
 * @param lastActivityAt when it was last seen active; empty: not yet observed
 * @param keyGeneration the generation its current session key is derived for; pause, resume and
 *     delete advance it
 * @param operation the change under way and the replica doing it; empty when none
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
    long version,
    SandboxSettings settings,
    Optional<Instant> timeoutAt,
    Optional<Instant> lastActivityAt,
    long keyGeneration,
    Optional<SandboxOperation> operation) {
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
    Objects.requireNonNull(settings, "settings");
    Objects.requireNonNull(timeoutAt, "timeoutAt");
    Objects.requireNonNull(lastActivityAt, "lastActivityAt");
    Objects.requireNonNull(operation, "operation");
  }

  /** A record with no operation under way. */
  public SandboxRecord(
      String id,
      Optional<String> ownerUserId,
      String specId,
      SandboxStatus status,
      Optional<String> sessionKeyHash,
      Optional<RuntimeHandle> runtime,
      Optional<String> statusDetail,
      Instant createdAt,
      Instant updatedAt,
      long version,
      SandboxSettings settings,
      Optional<Instant> timeoutAt,
      Optional<Instant> lastActivityAt,
      long keyGeneration) {
    this(
        id,
        ownerUserId,
        specId,
        status,
        sessionKeyHash,
        runtime,
        statusDetail,
        createdAt,
        updatedAt,
        version,
        settings,
        timeoutAt,
        lastActivityAt,
        keyGeneration,
        Optional.empty());
  }

  /** A record with no settings, no lifetime and key generation 0. */
  public SandboxRecord(
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
    this(
        id,
        ownerUserId,
        specId,
        status,
        sessionKeyHash,
        runtime,
        statusDetail,
        createdAt,
        updatedAt,
        version,
        SandboxSettings.NONE,
        Optional.empty(),
        Optional.empty(),
        0,
        Optional.empty());
  }

  public SandboxRecord withStatus(SandboxStatus newStatus, Optional<String> detail) {
    Copy copy = new Copy(this);
    copy.status = newStatus;
    copy.statusDetail = detail;
    return copy.build();
  }

  public SandboxRecord withSessionKeyHash(Optional<String> hash) {
    Copy copy = new Copy(this);
    copy.sessionKeyHash = hash;
    return copy.build();
  }

  public SandboxRecord withRuntime(Optional<RuntimeHandle> handle) {
    Copy copy = new Copy(this);
    copy.runtime = handle;
    return copy.build();
  }

  public SandboxRecord withSettings(SandboxSettings newSettings) {
    Copy copy = new Copy(this);
    copy.settings = newSettings;
    return copy.build();
  }

  public SandboxRecord withTimeoutAt(Optional<Instant> at) {
    Copy copy = new Copy(this);
    copy.timeoutAt = at;
    return copy.build();
  }

  public SandboxRecord withLastActivityAt(Optional<Instant> at) {
    Copy copy = new Copy(this);
    copy.lastActivityAt = at;
    return copy.build();
  }

  /** The same record with its key generation set and its key hash replaced. */
  public SandboxRecord withKey(long generation, Optional<String> hash) {
    Copy copy = new Copy(this);
    copy.keyGeneration = generation;
    copy.sessionKeyHash = hash;
    return copy.build();
  }

  /** The same record with {@code newOperation} under way (empty: none). */
  public SandboxRecord withOperation(Optional<SandboxOperation> newOperation) {
    Copy copy = new Copy(this);
    copy.operation = newOperation;
    return copy.build();
  }

  /** A record's components, copied to change a few: what every {@code with} method starts from. */
  private static final class Copy {
    private final String id;
    private final Optional<String> ownerUserId;
    private final String specId;
    private SandboxStatus status;
    private Optional<String> sessionKeyHash;
    private Optional<RuntimeHandle> runtime;
    private Optional<String> statusDetail;
    private final Instant createdAt;
    private final Instant updatedAt;
    private final long version;
    private SandboxSettings settings;
    private Optional<Instant> timeoutAt;
    private Optional<Instant> lastActivityAt;
    private long keyGeneration;
    private Optional<SandboxOperation> operation;

    Copy(SandboxRecord r) {
      id = r.id;
      ownerUserId = r.ownerUserId;
      specId = r.specId;
      status = r.status;
      sessionKeyHash = r.sessionKeyHash;
      runtime = r.runtime;
      statusDetail = r.statusDetail;
      createdAt = r.createdAt;
      updatedAt = r.updatedAt;
      version = r.version;
      settings = r.settings;
      timeoutAt = r.timeoutAt;
      lastActivityAt = r.lastActivityAt;
      keyGeneration = r.keyGeneration;
      operation = r.operation;
    }

    SandboxRecord build() {
      return new SandboxRecord(
          id,
          ownerUserId,
          specId,
          status,
          sessionKeyHash,
          runtime,
          statusDetail,
          createdAt,
          updatedAt,
          version,
          settings,
          timeoutAt,
          lastActivityAt,
          keyGeneration,
          operation);
    }
  }
}
