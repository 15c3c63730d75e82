package dev.paddock.store;

import static java.util.Objects.requireNonNull;

import dev.paddock.api.Page;
import dev.paddock.api.PageRequest;
import dev.paddock.api.SandboxFilter;
import dev.paddock.api.SandboxStatus;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/** {@link SandboxStore} over JDBC: one table class per concern, sharing one {@link Database}. */
final class JdbcSandboxStore implements SandboxStore {
  private final Database database;
  private final SandboxTable sandboxes;
  private final UserTable users;
  private final WebhookTable webhooks;
  private final ReplicaTable replicas;
  private final QueueTable queue;

  JdbcSandboxStore(Database database, Clock clock) {
    this.database = database;
    this.sandboxes = new SandboxTable(database, clock);
    this.users = new UserTable(database);
    this.webhooks = new WebhookTable(database, clock);
    this.replicas = new ReplicaTable(database, clock);
    this.queue = new QueueTable(database);
  }

  @Override
  public SandboxRecord insert(SandboxRecord record) {
    return sandboxes.insert(requireNonNull(record, "record"));
  }

  @Override
  public Optional<SandboxRecord> find(String sandboxId) {
    return sandboxes.find(requireNonNull(sandboxId, "sandboxId"));
  }

  @Override
  public java.util.OptionalLong version(String sandboxId) {
    return sandboxes.version(requireNonNull(sandboxId, "sandboxId"));
  }

  @Override
  public Optional<SandboxRecord> findBySessionKeyHash(String keyHash) {
    return sandboxes.findBySessionKeyHash(requireNonNull(keyHash, "keyHash"));
  }

  @Override
  public SandboxRecord update(SandboxRecord record) {
    return sandboxes.update(requireNonNull(record, "record"));
  }

  @Override
  public boolean delete(String sandboxId) {
    return sandboxes.delete(requireNonNull(sandboxId, "sandboxId"));
  }

  @Override
  public Page<SandboxRecord> page(
      Optional<String> owner, SandboxFilter filter, PageRequest request) {
    return sandboxes.page(
        requireNonNull(owner, "owner"),
        requireNonNull(filter, "filter"),
        requireNonNull(request, "request"));
  }

  @Override
  public List<SandboxRecord> withStatus(Collection<SandboxStatus> statuses) {
    return sandboxes.withStatus(List.copyOf(statuses));
  }

  @Override
  public QueueEntry enqueue(QueueEntry entry) {
    return queue.insert(requireNonNull(entry, "entry"));
  }

  @Override
  public List<QueueEntry> queue() {
    return queue.all();
  }

  @Override
  public int renewQueueLeases(String holder, Collection<String> sandboxIds, Instant until) {
    return queue.renew(
        requireNonNull(holder, "holder"), List.copyOf(sandboxIds), requireNonNull(until, "until"));
  }

  @Override
  public boolean dequeue(String sandboxId) {
    return queue.remove(requireNonNull(sandboxId, "sandboxId"));
  }

  @Override
  public UserRecord insertUser(UserRecord user) {
    return users.insertUser(requireNonNull(user, "user"));
  }

  @Override
  public Optional<UserRecord> findUser(String userId) {
    return users.findUser("id", requireNonNull(userId, "userId"));
  }

  @Override
  public Optional<UserRecord> findUserByName(String name) {
    return users.findUser("name", requireNonNull(name, "name"));
  }

  @Override
  public List<UserRecord> users() {
    return users.users();
  }

  @Override
  public ApiKeyRecord insertApiKey(ApiKeyRecord key) {
    return users.insertApiKey(requireNonNull(key, "key"));
  }

  @Override
  public Optional<ApiKeyRecord> findApiKeyByHash(String keyHash) {
    return users.findApiKeyByHash(requireNonNull(keyHash, "keyHash"));
  }

  @Override
  public List<ApiKeyRecord> apiKeys(String userId) {
    return users.apiKeys(requireNonNull(userId, "userId"));
  }

  @Override
  public boolean revokeApiKey(String keyId, Instant when) {
    return users.revoke("id", requireNonNull(keyId, "keyId"), requireNonNull(when, "when")) > 0;
  }

  @Override
  public int revokeApiKeys(String userId, Instant when) {
    return users.revoke("user_id", requireNonNull(userId, "userId"), requireNonNull(when, "when"));
  }

  @Override
  public AppendedEvents appendEvents(
      String sandboxId, String conversationId, List<String> jsonEvents, WebhookQuota quota) {
    return webhooks.appendEvents(
        requireNonNull(sandboxId, "sandboxId"),
        requireNonNull(conversationId, "conversationId"),
        List.copyOf(jsonEvents),
        requireNonNull(quota, "quota"));
  }

  @Override
  public List<WebhookEvent> events(String conversationId, long afterSequence, int limit) {
    return webhooks.events(requireNonNull(conversationId, "conversationId"), afterSequence, limit);
  }

  @Override
  public void upsertConversation(
      String conversationId, String sandboxId, String json, WebhookQuota quota) {
    webhooks.upsertConversation(
        requireNonNull(conversationId, "conversationId"),
        requireNonNull(sandboxId, "sandboxId"),
        requireNonNull(json, "json"),
        requireNonNull(quota, "quota"));
  }

  @Override
  public Optional<String> conversation(String conversationId) {
    return webhooks.conversation(requireNonNull(conversationId, "conversationId"));
  }

  @Override
  public void heartbeat(String replicaId, Duration ttl) {
    replicas.heartbeat(requireNonNull(replicaId, "replicaId"), positive(ttl));
  }

  @Override
  public Set<String> liveReplicas() {
    return Set.copyOf(replicas.live());
  }

  @Override
  public void retireReplica(String replicaId) {
    replicas.retire(requireNonNull(replicaId, "replicaId"));
  }

  @Override
  public boolean tryLease(String name, String holder, Duration ttl) {
    return replicas.tryLease(
        requireNonNull(name, "name"), requireNonNull(holder, "holder"), positive(ttl));
  }

  @Override
  public void releaseLease(String name, String holder) {
    replicas.releaseLease(requireNonNull(name, "name"), requireNonNull(holder, "holder"));
  }

  private static Duration positive(Duration ttl) {
    if (ttl.isNegative() || ttl.isZero()) {
      throw new IllegalArgumentException("a lease or heartbeat lasts a positive time, not " + ttl);
    }
    return ttl;
  }

  @Override
  public void ping() {
    database.run(
        "answer a ping",
        connection -> {
          try (var select = connection.prepareStatement("SELECT 1")) {
            select.executeQuery().close();
          }
          return null;
        });
  }

  @Override
  public void close() {
    database.close();
  }
}
