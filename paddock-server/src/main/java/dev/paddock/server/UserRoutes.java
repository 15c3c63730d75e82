package dev.paddock.server;

import dev.paddock.api.KeyDigest;
import dev.paddock.http.Call;
import dev.paddock.http.HttpError;
import dev.paddock.http.JsonBody;
import dev.paddock.http.Router;
import dev.paddock.store.ApiKeyRecord;
import dev.paddock.store.ConflictException;
import dev.paddock.store.SandboxStore;
import dev.paddock.store.UserRecord;
import java.io.IOException;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Users and their API keys (Paddock's own; OpenHands delegates this to its SaaS layer). An admin
 * creates users and keys and revokes them; a user may manage its own keys. A key is shown once, at
 * creation; only its SHA-256 digest is stored.
 */
final class UserRoutes {
  private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}");

  private final SandboxStore store;
  private final Authenticator auth;
  private final Clock clock;

  UserRoutes(SandboxStore store, Authenticator auth, Clock clock) {
    this.store = store;
    this.auth = auth;
    this.clock = clock;
  }

  void register(Router router) {
    router
        .add("GET", "/api/v1/users/me", Failures.mapped(this::me))
        .add("GET", "/api/v1/users", Failures.mapped(this::list))
        .add("POST", "/api/v1/users", Failures.mapped(this::create))
        .add("DELETE", "/api/v1/users/{id}", Failures.mapped(this::revokeUser))
        .add("GET", "/api/v1/users/{id}/api-keys", Failures.mapped(this::listKeys))
        .add("POST", "/api/v1/users/{id}/api-keys", Failures.mapped(this::createKey))
        .add("DELETE", "/api/v1/users/{id}/api-keys/{key_id}", Failures.mapped(this::revokeKey));
  }

  private void me(Call call) throws IOException {
    call.sendJson(200, Views.user(auth.require(call).user()));
  }

  private void list(Call call) throws IOException {
    auth.requireAdmin(call);
    call.sendJson(200, Map.of("items", store.users().stream().map(Views::user).toList()));
  }

  /** {@code {"name": ..., "admin": false}} → the user and its first API key (shown once). */
  private void create(Call call) throws IOException {
    auth.requireAdmin(call);
    JsonBody body = call.jsonBody(Set.of("name", "admin"));
    String name = body.requiredString("name");
    if (!NAME.matcher(name).matches()) {
      throw HttpError.unprocessable(
          "name must be 1-64 letters, digits, '.', '_', '@' or '-', starting with a letter or digit");
    }
    if (store.findUserByName(name).isPresent()) {
      throw HttpError.conflict("a user named '" + name + "' already exists");
    }
    UserRecord user =
        store.insertUser(
            new UserRecord(
                Keys.newId(), name, body.optionalBoolean("admin").orElse(false), clock.instant()));
    call.sendJson(201, withKey(Views.user(user), issueKey(user.id(), "initial")));
  }

  private void createKey(Call call) throws IOException {
    UserRecord user = visibleUser(call);
    byte[] raw = call.smallBody();
    String label = "";
    if (raw.length > 0) {
      label = JsonBody.parse(raw, Set.of("label")).optionalString("label").orElse("");
    }
    call.sendJson(201, withKey(new LinkedHashMap<>(), issueKey(user.id(), label)));
  }

  private void listKeys(Call call) throws IOException {
    UserRecord user = visibleUser(call);
    call.sendJson(
        200, Map.of("items", store.apiKeys(user.id()).stream().map(Views::apiKey).toList()));
  }

  private void revokeKey(Call call) throws IOException {
    UserRecord user = visibleUser(call);
    String keyId = call.pathParam("key_id");
    boolean owned = store.apiKeys(user.id()).stream().anyMatch(k -> k.id().equals(keyId));
    if (!owned || !store.revokeApiKey(keyId, clock.instant())) {
      throw HttpError.notFound("no active API key " + keyId + " for user " + user.id());
    }
    call.sendJson(200, Map.of("success", true));
  }

  /** Revokes every key of the user (the user stays, owning its sandboxes). Admin only. */
  private void revokeUser(Call call) throws IOException {
    var admin = auth.requireAdmin(call);
    String id = call.pathParam("id");
    UserRecord user = store.findUser(id).orElseThrow(() -> HttpError.notFound("no user " + id));
    if (user.id().equals(admin.user().id())) {
      throw HttpError.badRequest("an admin cannot revoke its own keys this way; use another admin");
    }
    call.sendJson(
        200,
        Map.of("success", true, "revoked_keys", store.revokeApiKeys(user.id(), clock.instant())));
  }

  /** The user named in the path, if the caller is an admin or that user; else 404. */
  private UserRecord visibleUser(Call call) {
    var who = auth.require(call);
    String id = call.pathParam("id");
    Optional<UserRecord> user = store.findUser(id);
    if (user.isEmpty() || !(who.user().admin() || who.user().id().equals(id))) {
      throw HttpError.notFound("no user " + id);
    }
    return user.get();
  }

  private record Issued(ApiKeyRecord record, String key) {}

  private Issued issueKey(String userId, String label) {
    String key = Keys.newApiKey();
    ApiKeyRecord record =
        store.insertApiKey(
            new ApiKeyRecord(
                Keys.newId(),
                userId,
                KeyDigest.sha256Hex(key),
                label,
                clock.instant(),
                Optional.empty()));
    return new Issued(record, key);
  }

  private static Map<String, Object> withKey(Map<String, Object> view, Issued issued) {
    Map<String, Object> m = new LinkedHashMap<>(view);
    m.put("api_key_id", issued.record().id());
    m.put("api_key", issued.key());
    return m;
  }

  /**
   * Creates the first admin when the store has no user: with {@code presetKey} when given ({@code
   * PADDOCK_ADMIN_KEY}), else a new key, which is returned so it can be shown once.
   */
  static Optional<String> bootstrapAdmin(
      SandboxStore store, Optional<String> presetKey, Clock clock) {
    if (!store.users().isEmpty()) {
      presetKey.ifPresent(
          key -> {
            if (store.findApiKeyByHash(KeyDigest.sha256Hex(key)).isEmpty()) {
              UserRecord admin =
                  store.users().stream().filter(UserRecord::admin).findFirst().orElseThrow();
              insertOnce(
                  store,
                  new ApiKeyRecord(
                      Keys.newId(),
                      admin.id(),
                      KeyDigest.sha256Hex(key),
                      "PADDOCK_ADMIN_KEY",
                      clock.instant(),
                      Optional.empty()));
            }
          });
      return Optional.empty();
    }
    UserRecord admin;
    try {
      admin = store.insertUser(new UserRecord(Keys.newId(), "admin", true, clock.instant()));
    } catch (ConflictException e) {
      // Another replica on the same database bootstrapped first: only the preset key remains.
      return bootstrapAdmin(store, presetKey, clock);
    }
    String key = presetKey.orElseGet(Keys::newApiKey);
    store.insertApiKey(
        new ApiKeyRecord(
            Keys.newId(),
            admin.id(),
            KeyDigest.sha256Hex(key),
            "bootstrap",
            clock.instant(),
            Optional.empty()));
    return presetKey.isPresent() ? Optional.empty() : Optional.of(key);
  }

  /** Inserts a key unless another replica inserted the same one meanwhile. */
  private static void insertOnce(SandboxStore store, ApiKeyRecord key) {
    try {
      store.insertApiKey(key);
    } catch (ConflictException e) {
      // Same hash inserted by a replica starting at the same time: the key works either way.
    }
  }
}
