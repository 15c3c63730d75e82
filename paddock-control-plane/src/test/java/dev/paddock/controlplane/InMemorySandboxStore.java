package dev.paddock.controlplane;

import dev.paddock.api.Page;
import dev.paddock.api.PageRequest;
import dev.paddock.api.SandboxFilter;
import dev.paddock.api.SandboxStatus;
import dev.paddock.store.ApiKeyRecord;
import dev.paddock.store.AppendedEvents;
import dev.paddock.store.ConflictException;
import dev.paddock.store.SandboxRecord;
import dev.paddock.store.SandboxStore;
import dev.paddock.store.UserRecord;
import dev.paddock.store.WebhookEvent;
import dev.paddock.store.WebhookQuota;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.Base64;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Test stand-in for the JDBC store, so the control plane can be built and tested before (and
 * independently of) it. It keeps the interface's semantics honestly: inserts conflict on a taken
 * id, {@link #update} is a compare-and-set on the version (a stale or deleted row is a {@link
 * ConflictException}), pages are newest first with opaque cursors that stay stable under inserts.
 * Everything lives in memory under one lock; a "restart" reuses the same instance. Not for
 * production: nothing survives the JVM.
 */
public final class InMemorySandboxStore implements SandboxStore {
  private static final Comparator<SandboxRecord> NEWEST_FIRST =
      Comparator.comparing(SandboxRecord::createdAt).thenComparing(SandboxRecord::id).reversed();

  private final Clock clock;
  private final Map<String, SandboxRecord> sandboxes = new HashMap<>();
  private final Map<String, UserRecord> users = new LinkedHashMap<>();
  private final Map<String, ApiKeyRecord> apiKeys = new LinkedHashMap<>();

  public InMemorySandboxStore(Clock clock) {
    this.clock = clock;
  }

  public InMemorySandboxStore() {
    this(Clock.systemUTC());
  }

  @Override
  public synchronized SandboxRecord insert(SandboxRecord record) {
    if (sandboxes.containsKey(record.id())) {
      throw new ConflictException("sandbox id " + record.id() + " is taken");
    }
    SandboxRecord stored = withVersion(record, 0, record.updatedAt());
    sandboxes.put(record.id(), stored);
    return stored;
  }

  @Override
  public synchronized Optional<SandboxRecord> find(String sandboxId) {
    return Optional.ofNullable(sandboxes.get(sandboxId));
  }

  @Override
  public synchronized Optional<SandboxRecord> findBySessionKeyHash(String keyHash) {
    return sandboxes.values().stream()
        .filter(r -> r.sessionKeyHash().equals(Optional.of(keyHash)))
        .findFirst();
  }

  @Override
  public synchronized SandboxRecord update(SandboxRecord record) {
    SandboxRecord current = sandboxes.get(record.id());
    if (current == null) {
      throw new ConflictException("sandbox " + record.id() + " is gone");
    }
    if (current.version() != record.version()) {
      throw new ConflictException(
          "sandbox "
              + record.id()
              + " changed: version "
              + current.version()
              + ", update based on "
              + record.version());
    }
    SandboxRecord stored = withVersion(record, record.version() + 1, clock.instant());
    sandboxes.put(record.id(), stored);
    return stored;
  }

  @Override
  public synchronized boolean delete(String sandboxId) {
    return sandboxes.remove(sandboxId) != null;
  }

  @Override
  public synchronized Page<SandboxRecord> page(
      Optional<String> owner, SandboxFilter filter, PageRequest request) {
    List<SandboxRecord> sorted =
        sandboxes.values().stream()
            .filter(r -> owner.isEmpty() || r.ownerUserId().equals(owner))
            .filter(r -> matches(r, filter))
            .sorted(NEWEST_FIRST)
            .toList();
    Optional<SandboxRecord> after = request.pageId().map(InMemorySandboxStore::cursor);
    List<SandboxRecord> rest =
        after.isEmpty()
            ? sorted
            : sorted.stream().filter(r -> NEWEST_FIRST.compare(r, after.get()) > 0).toList();
    List<SandboxRecord> items = rest.subList(0, Math.min(request.limit(), rest.size()));
    Optional<String> next =
        rest.size() > items.size()
            ? Optional.of(cursorOf(items.get(items.size() - 1)))
            : Optional.empty();
    return new Page<>(items, next);
  }

  private static boolean matches(SandboxRecord r, SandboxFilter filter) {
    return (filter.statuses().isEmpty() || filter.statuses().contains(r.status()))
        && filter.specId().map(r.specId()::equals).orElse(true)
        && r.settings().labels().entrySet().containsAll(filter.labels().entrySet());
  }

  // The cursor names the last item's sort key (created-at and id), so inserts do not shift pages.
  private static String cursorOf(SandboxRecord last) {
    String key = last.createdAt() + "|" + last.id();
    return Base64.getUrlEncoder().encodeToString(key.getBytes(StandardCharsets.UTF_8));
  }

  private static SandboxRecord cursor(String pageId) {
    String key;
    try {
      key = new String(Base64.getUrlDecoder().decode(pageId), StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException("invalid page id '" + pageId + "'", e);
    }
    int bar = key.indexOf('|');
    if (bar < 0) {
      throw new IllegalArgumentException("invalid page id '" + pageId + "'");
    }
    Instant createdAt = Instant.parse(key.substring(0, bar));
    return new SandboxRecord(
        key.substring(bar + 1),
        Optional.empty(),
        "",
        SandboxStatus.MISSING,
        Optional.empty(),
        Optional.empty(),
        Optional.empty(),
        createdAt,
        createdAt,
        0);
  }

  @Override
  public synchronized List<SandboxRecord> withStatus(Collection<SandboxStatus> statuses) {
    return sandboxes.values().stream().filter(r -> statuses.contains(r.status())).toList();
  }

  @Override
  public synchronized UserRecord insertUser(UserRecord user) {
    if (users.containsKey(user.id()) || findUserByName(user.name()).isPresent()) {
      throw new ConflictException("user " + user.name() + " exists");
    }
    users.put(user.id(), user);
    return user;
  }

  @Override
  public synchronized Optional<UserRecord> findUser(String userId) {
    return Optional.ofNullable(users.get(userId));
  }

  @Override
  public synchronized Optional<UserRecord> findUserByName(String name) {
    return users.values().stream().filter(u -> u.name().equals(name)).findFirst();
  }

  @Override
  public synchronized List<UserRecord> users() {
    return List.copyOf(users.values());
  }

  @Override
  public synchronized ApiKeyRecord insertApiKey(ApiKeyRecord key) {
    if (apiKeys.containsKey(key.id())) {
      throw new ConflictException("api key " + key.id() + " exists");
    }
    apiKeys.put(key.id(), key);
    return key;
  }

  @Override
  public synchronized Optional<ApiKeyRecord> findApiKeyByHash(String keyHash) {
    return apiKeys.values().stream().filter(k -> k.keyHash().equals(keyHash)).findFirst();
  }

  @Override
  public synchronized List<ApiKeyRecord> apiKeys(String userId) {
    return apiKeys.values().stream().filter(k -> k.userId().equals(userId)).toList();
  }

  @Override
  public synchronized boolean revokeApiKey(String keyId, Instant when) {
    ApiKeyRecord key = apiKeys.get(keyId);
    if (key == null || key.revokedAt().isPresent()) {
      return false;
    }
    apiKeys.put(keyId, revoked(key, when));
    return true;
  }

  @Override
  public synchronized int revokeApiKeys(String userId, Instant when) {
    int count = 0;
    for (ApiKeyRecord key : apiKeys(userId)) {
      if (revokeApiKey(key.id(), when)) {
        count++;
      }
    }
    return count;
  }

  private static ApiKeyRecord revoked(ApiKeyRecord key, Instant when) {
    return new ApiKeyRecord(
        key.id(), key.userId(), key.keyHash(), key.label(), key.createdAt(), Optional.of(when));
  }

  // The control plane never touches webhooks (the REST layer does): their ownership and quota
  // rules are proven on the real store (SandboxStoreContract), not imitated here.

  @Override
  public AppendedEvents appendEvents(
      String sandboxId, String conversationId, List<String> jsonEvents, WebhookQuota quota) {
    throw new UnsupportedOperationException("webhooks are not part of the control plane's tests");
  }

  @Override
  public synchronized List<WebhookEvent> events(
      String conversationId, long afterSequence, int limit) {
    return List.of();
  }

  @Override
  public void upsertConversation(
      String conversationId, String sandboxId, String json, WebhookQuota quota) {
    throw new UnsupportedOperationException("webhooks are not part of the control plane's tests");
  }

  @Override
  public synchronized Optional<String> conversation(String conversationId) {
    return Optional.empty();
  }

  @Override
  public void close() {}

  private static SandboxRecord withVersion(SandboxRecord r, long version, Instant updatedAt) {
    return new SandboxRecord(
        r.id(),
        r.ownerUserId(),
        r.specId(),
        r.status(),
        r.sessionKeyHash(),
        r.runtime(),
        r.statusDetail(),
        r.createdAt(),
        updatedAt,
        version,
        r.settings(),
        r.timeoutAt(),
        r.lastActivityAt(),
        r.keyGeneration());
  }
}
