package dev.paddock.server;

import dev.paddock.api.Caller;
import dev.paddock.api.KeyDigest;
import dev.paddock.http.Call;
import dev.paddock.http.HttpError;
import dev.paddock.store.ApiKeyRecord;
import dev.paddock.store.SandboxStore;
import dev.paddock.store.UserRecord;
import java.util.Optional;

/**
 * Resolves {@code Authorization: Bearer <api key>} to a {@link Caller}: the key's SHA-256 digest is
 * looked up in the store (keys are never stored in plaintext), revoked keys and unknown keys are
 * 401.
 */
final class Authenticator {
  private final SandboxStore store;

  Authenticator(SandboxStore store) {
    this.store = store;
  }

  /** The authenticated user. @throws HttpError 401 */
  Authenticated require(Call call) {
    String header = call.header("Authorization").orElse("");
    if (!header.regionMatches(true, 0, "Bearer ", 0, 7) || header.length() <= 7) {
      throw new HttpError(401, "missing API key: send 'Authorization: Bearer <api key>'");
    }
    String key = header.substring(7).trim();
    Optional<ApiKeyRecord> record = store.findApiKeyByHash(KeyDigest.sha256Hex(key));
    if (record.isEmpty() || record.get().revokedAt().isPresent()) {
      throw new HttpError(401, "invalid or revoked API key");
    }
    UserRecord user =
        store
            .findUser(record.get().userId())
            .orElseThrow(() -> new HttpError(401, "the API key's user no longer exists"));
    return new Authenticated(user, new Caller(Optional.of(user.id()), user.admin()));
  }

  /** The authenticated user, who must be an admin. @throws HttpError 401 or 403 */
  Authenticated requireAdmin(Call call) {
    Authenticated who = require(call);
    if (!who.user().admin()) {
      throw new HttpError(403, "this needs an admin API key");
    }
    return who;
  }

  record Authenticated(UserRecord user, Caller caller) {}
}
