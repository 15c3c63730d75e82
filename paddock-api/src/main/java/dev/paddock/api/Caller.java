package dev.paddock.api;

import java.util.Objects;
import java.util.Optional;

/**
 * Who is asking. A user sees only the sandboxes it created (others are "not found"); an admin sees
 * every sandbox.
 *
 * @param userId the authenticated user
 * @param admin whether the caller may see and act on every sandbox
 */
public record Caller(Optional<String> userId, boolean admin) {
  public Caller {
    Objects.requireNonNull(userId, "userId");
  }

  public static Caller user(String userId) {
    return new Caller(Optional.of(userId), false);
  }

  public static Caller admin(String userId) {
    return new Caller(Optional.of(userId), true);
  }

  /** Whether this caller may see a sandbox owned by {@code owner}. */
  public boolean mayAccess(Optional<String> owner) {
    return admin || (userId.isPresent() && userId.equals(owner));
  }
}
