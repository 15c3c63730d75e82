package dev.paddock.store;

import java.util.Objects;

/**
 * A change of a sandbox under way and the control-plane replica doing it, kept in the store for as
 * long as it runs: another replica finishes or undoes it when that replica's heartbeat lapses (see
 * {@link SandboxStore#liveReplicas()}), and waits for it while it lives.
 *
 * @param kind what is being done
 * @param replicaId the replica doing it
 */
public record SandboxOperation(Kind kind, String replicaId) {
  /** The changes that take long enough to be cut short by a crash. */
  public enum Kind {
    START,
    RESUME,
    PAUSE,
    DELETE
  }

  public SandboxOperation {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(replicaId, "replicaId");
  }
}
