package dev.paddock.controlplane;

import dev.paddock.api.ArchiveStore;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * Immutable settings of the control plane. Build with {@link #builder(String)}; every field but the
 * master secret has a default.
 *
 * @param maxSandboxes most sandboxes STARTING or RUNNING at once on this control plane (default: no
 *     limit)
 * @param maxSandboxesPerUser most STARTING or RUNNING sandboxes of one owner (default: no limit)
 * @param pauseOldest past a limit, pause the oldest RUNNING sandbox (the caller's own for the
 *     per-user limit) instead of refusing the start or resume (default: refuse)
 * @param startTimeout how long a start may take before a sandbox left STARTING by a dead start task
 *     is declared failed, and how long lifecycle calls wait for a start in progress (default 120 s)
 * @param agentAdminTimeout connect and request timeout of calls to an agent's admin route (default
 *     5 s)
 * @param masterSecret the secret every sandbox's admin key is derived from (HMAC-SHA256 with the
 *     sandbox id); at least 32 bytes; must stay the same across restarts so adopted agents can
 *     still be rotated. Never printed by {@link #toString()}.
 * @param clock the time source for creation times and start deadlines
 * @param events told about starts as they succeed or fail (metrics); default none
 * @param archives whether and how workspaces are archived before delete (default off)
 * @param archiveStore where archives go and are read back from; required when archiving is on
 * @param limits what a create may ask for, and default lifetimes (default: {@link
 *     SandboxLimits#NONE})
 * @param replicaId this control plane's name among the replicas sharing its store (default: {@code
 *     cp-} and 16 random hex digits, new for every service); written into the heartbeat, the
 *     background lease and the operations it has under way
 * @param replicaLease how long this replica's heartbeat and background lease last without renewal
 *     (default 15 s; renewed every third of it): a replica killed mid-operation is taken over this
 *     long after its last heartbeat
 * @param queue the start queue's bounds (default {@link QueueSettings#DEFAULTS})
 */
public record ControlPlaneConfig(
    int maxSandboxes,
    int maxSandboxesPerUser,
    boolean pauseOldest,
    Duration startTimeout,
    Duration agentAdminTimeout,
    String masterSecret,
    Clock clock,
    SandboxEvents events,
    ArchiveSettings archives,
    Optional<ArchiveStore> archiveStore,
    SandboxLimits limits,
    String replicaId,
    Duration replicaLease,
    QueueSettings queue) {
  /** The fewest bytes a master secret may have. */
  public static final int MIN_SECRET_BYTES = 32;

  public ControlPlaneConfig {
    if (maxSandboxes < 1 || maxSandboxesPerUser < 1) {
      throw new IllegalArgumentException("capacity limits must be at least 1");
    }
    requirePositive(startTimeout, "startTimeout");
    requirePositive(agentAdminTimeout, "agentAdminTimeout");
    Objects.requireNonNull(masterSecret, "masterSecret");
    if (masterSecret.getBytes(StandardCharsets.UTF_8).length < MIN_SECRET_BYTES) {
      throw new IllegalArgumentException(
          "the master secret must have at least " + MIN_SECRET_BYTES + " bytes");
    }
    Objects.requireNonNull(clock, "clock");
    Objects.requireNonNull(events, "events");
    Objects.requireNonNull(archives, "archives");
    Objects.requireNonNull(archiveStore, "archiveStore");
    Objects.requireNonNull(limits, "limits");
    Objects.requireNonNull(replicaId, "replicaId");
    if (replicaId.isBlank()) {
      throw new IllegalArgumentException("the replica id must not be blank");
    }
    requirePositive(replicaLease, "replicaLease");
    Objects.requireNonNull(queue, "queue");
    if (archives.enabled() && archiveStore.isEmpty()) {
      throw new IllegalArgumentException("archiving is enabled but no archive store is set");
    }
  }

  /** This configuration with {@code events} told about starts instead. */
  public ControlPlaneConfig withEvents(SandboxEvents events) {
    return new ControlPlaneConfig(
        maxSandboxes,
        maxSandboxesPerUser,
        pauseOldest,
        startTimeout,
        agentAdminTimeout,
        masterSecret,
        clock,
        events,
        archives,
        archiveStore,
        limits,
        replicaId,
        replicaLease,
        queue);
  }

  /** A builder with the defaults above and the given master secret. */
  public static Builder builder(String masterSecret) {
    return new Builder(masterSecret);
  }

  private static void requirePositive(Duration d, String name) {
    Objects.requireNonNull(d, name);
    if (d.isNegative() || d.isZero()) {
      throw new IllegalArgumentException(name + " must be positive, got " + d);
    }
  }

  /** Leaves the master secret out. */
  @Override
  public String toString() {
    return "ControlPlaneConfig[maxSandboxes="
        + maxSandboxes
        + ", maxSandboxesPerUser="
        + maxSandboxesPerUser
        + ", pauseOldest="
        + pauseOldest
        + ", startTimeout="
        + startTimeout
        + ", agentAdminTimeout="
        + agentAdminTimeout
        + ", masterSecret=(hidden), clock="
        + clock
        + ", archives="
        + archives
        + ", limits="
        + limits
        + ", replicaId="
        + replicaId
        + ", replicaLease="
        + replicaLease
        + ", queue="
        + queue
        + "]";
  }

  /** Builder; not thread-safe. */
  public static final class Builder {
    private final String masterSecret;
    private int maxSandboxes = Integer.MAX_VALUE;
    private int maxSandboxesPerUser = Integer.MAX_VALUE;
    private boolean pauseOldest;
    private Duration startTimeout = Duration.ofSeconds(120);
    private Duration agentAdminTimeout = Duration.ofSeconds(5);
    private Clock clock = Clock.systemUTC();
    private SandboxEvents events = SandboxEvents.NONE;
    private ArchiveSettings archives = ArchiveSettings.disabled();
    private Optional<ArchiveStore> archiveStore = Optional.empty();
    private SandboxLimits limits = SandboxLimits.NONE;
    private String replicaId = newReplicaId();
    private Duration replicaLease = Duration.ofSeconds(15);
    private QueueSettings queue = QueueSettings.DEFAULTS;

    private Builder(String masterSecret) {
      this.masterSecret = Objects.requireNonNull(masterSecret, "masterSecret");
    }

    public Builder maxSandboxes(int max) {
      this.maxSandboxes = max;
      return this;
    }

    public Builder maxSandboxesPerUser(int max) {
      this.maxSandboxesPerUser = max;
      return this;
    }

    public Builder pauseOldest(boolean pauseOldest) {
      this.pauseOldest = pauseOldest;
      return this;
    }

    public Builder startTimeout(Duration timeout) {
      this.startTimeout = timeout;
      return this;
    }

    public Builder agentAdminTimeout(Duration timeout) {
      this.agentAdminTimeout = timeout;
      return this;
    }

    public Builder clock(Clock clock) {
      this.clock = clock;
      return this;
    }

    public Builder events(SandboxEvents events) {
      this.events = events;
      return this;
    }

    public Builder archives(ArchiveSettings archives) {
      this.archives = archives;
      return this;
    }

    public Builder archiveStore(ArchiveStore store) {
      this.archiveStore = Optional.of(store);
      return this;
    }

    public Builder limits(SandboxLimits limits) {
      this.limits = limits;
      return this;
    }

    public Builder replicaId(String id) {
      this.replicaId = id;
      return this;
    }

    public Builder replicaLease(Duration lease) {
      this.replicaLease = lease;
      return this;
    }

    private static String newReplicaId() {
      byte[] bytes = new byte[8];
      new java.security.SecureRandom().nextBytes(bytes);
      return "cp-" + java.util.HexFormat.of().formatHex(bytes);
    }

    public Builder queue(QueueSettings queue) {
      this.queue = queue;
      return this;
    }

    public ControlPlaneConfig build() {
      return new ControlPlaneConfig(
          maxSandboxes,
          maxSandboxesPerUser,
          pauseOldest,
          startTimeout,
          agentAdminTimeout,
          masterSecret,
          clock,
          events,
          archives,
          archiveStore,
          limits,
          replicaId,
          replicaLease,
          queue);
    }
  }
}
