package dev.paddock.store;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * A user's API key, stored only as the SHA-256 hex of the key.
 *
 * @param id stable id (shown in listings; not the key)
 * @param userId owner
 * @param keyHash SHA-256 hex of the key
 * @param label what the user called it
 * @param createdAt creation time
 * @param revokedAt when it was revoked; a revoked key never authenticates again
 */
public record ApiKeyRecord(
    String id,
    String userId,
    String keyHash,
    String label,
    Instant createdAt,
    Optional<Instant> revokedAt) {
  public ApiKeyRecord {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(userId, "userId");
    Objects.requireNonNull(keyHash, "keyHash");
    Objects.requireNonNull(label, "label");
    Objects.requireNonNull(createdAt, "createdAt");
    Objects.requireNonNull(revokedAt, "revokedAt");
  }
}
