package dev.paddock.store;

import java.time.Instant;
import java.util.Objects;

/**
 * A user of the control plane.
 *
 * @param id stable id
 * @param name unique display name
 * @param admin sees and manages every sandbox and user
 * @param createdAt creation time
 */
public record UserRecord(String id, String name, boolean admin, Instant createdAt) {
  public UserRecord {
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(createdAt, "createdAt");
  }
}
