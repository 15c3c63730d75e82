package dev.paddock.store;

import dev.paddock.api.Page;
import dev.paddock.api.PageRequest;
import dev.paddock.api.SandboxFilter;
import dev.paddock.api.SandboxStatus;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Everything the control plane must not lose when it restarts: sandboxes (with their runtime
 * handles), users, API keys (hashes only), and events posted back by sandboxes. One implementation
 * over JDBC serves both SQLite (embedded default) and PostgreSQL (several control-plane replicas);
 * the schema is created and upgraded by versioned migrations at open. Thread-safe.
 */
public interface SandboxStore extends AutoCloseable {
  /**
   * One round trip to the database (a health check). Fails at once, without waiting for the pool,
   * while the database is known to be unreachable.
   *
   * @throws StoreException when it cannot be reached or does not answer
   */
  void ping();

  // Sandboxes

  /** Inserts a new sandbox; version 0. @throws ConflictException if the id is taken */
  SandboxRecord insert(SandboxRecord record);

  Optional<SandboxRecord> find(String sandboxId);

  /**
   * The stored version of a sandbox (every update bumps it), empty when it does not exist: a narrow
   * read for a caller that keeps a record and only needs to know whether it is still the stored one
   * (the gateway, on every request).
   */
  default java.util.OptionalLong version(String sandboxId) {
    return find(sandboxId)
        .map(r -> java.util.OptionalLong.of(r.version()))
        .orElse(java.util.OptionalLong.empty());
  }

  /** The sandbox whose current session key hashes to {@code keyHash}. */
  Optional<SandboxRecord> findBySessionKeyHash(String keyHash);

  /**
   * Replaces a sandbox if its stored version still equals {@code record.version()}; returns the
   * stored record with the version bumped and {@code updatedAt} set.
   *
   * @throws ConflictException when the row changed meanwhile or is gone
   */
  SandboxRecord update(SandboxRecord record);

  /** Deletes a sandbox; false when it was not there. */
  boolean delete(String sandboxId);

  /**
   * A page of sandboxes, newest first ({@code createdAt} desc, then id), of one owner or of all
   * ({@code owner} empty). Page ids are opaque and stable under inserts.
   */
  default Page<SandboxRecord> page(Optional<String> owner, PageRequest request) {
    return page(owner, SandboxFilter.ALL, request);
  }

  /**
   * A page of the sandboxes matching {@code filter} (statuses, every label selector, spec), newest
   * first, of one owner or of all; answered with indexes, so a page costs the same among a thousand
   * deleted sandboxes as among none.
   */
  Page<SandboxRecord> page(Optional<String> owner, SandboxFilter filter, PageRequest request);

  /** Every sandbox in one of {@code statuses} (for capacity checks and reconciliation). */
  List<SandboxRecord> withStatus(Collection<SandboxStatus> statuses);

  // The start queue (creates waiting for a slot; see QueueEntry)

  /** Adds a create to the start queue. @throws ConflictException if the id is queued already */
  QueueEntry enqueue(QueueEntry entry);

  /** Every queued create in admission order: {@code turn}, then {@code enqueuedAt}, then id. */
  List<QueueEntry> queue();

  /**
   * Moves the lease of {@code holder}'s entries among {@code sandboxIds} to {@code until}; returns
   * how many it moved (entries removed meanwhile, or another holder's, are left alone).
   */
  int renewQueueLeases(String holder, Collection<String> sandboxIds, Instant until);

  /** Removes a create from the start queue; false when it was not there. */
  boolean dequeue(String sandboxId);

  // Users and API keys

  /**
   * @throws ConflictException if the name is taken
   */
  UserRecord insertUser(UserRecord user);

  Optional<UserRecord> findUser(String userId);

  Optional<UserRecord> findUserByName(String name);

  List<UserRecord> users();

  ApiKeyRecord insertApiKey(ApiKeyRecord key);

  /** The key with this hash, revoked or not. */
  Optional<ApiKeyRecord> findApiKeyByHash(String keyHash);

  List<ApiKeyRecord> apiKeys(String userId);

  /** Marks a key revoked at {@code when}; false when unknown or already revoked. */
  boolean revokeApiKey(String keyId, Instant when);

  /** Revokes every key of a user; returns how many were revoked. */
  int revokeApiKeys(String userId, Instant when);

  // Webhooks

  /**
   * Stores events of a conversation atomically (all or none); returns them with sequence numbers.
   * The first sandbox to post to a conversation id (by events or document) owns it: its owner and
   * only it may write to it later. Beyond the quota's per-conversation limits the oldest events are
   * dropped in the same transaction.
   *
   * @throws ConversationRefusedException when another sandbox or owner has the conversation, or the
   *     sandbox owns the most conversations its quota allows; nothing is written
   */
  AppendedEvents appendEvents(
      String sandboxId, String conversationId, List<String> jsonEvents, WebhookQuota quota);

  /**
   * Events of one conversation after {@code afterSequence}, oldest first, at most {@code limit}.
   */
  List<WebhookEvent> events(String conversationId, long afterSequence, int limit);

  /**
   * Stores (insert or replace) a conversation document a sandbox posted, under the same ownership
   * rule as {@link #appendEvents}.
   *
   * @throws ConversationRefusedException as {@link #appendEvents} does; nothing is written
   */
  void upsertConversation(String conversationId, String sandboxId, String json, WebhookQuota quota);

  Optional<String> conversation(String conversationId);

  // Replicas and leases (several control planes on one database)

  /**
   * Records that control-plane replica {@code replicaId} is alive for {@code ttl} from now (the
   * store's clock): inserts its row or renews it. Call well within {@code ttl}, again and again.
   */
  void heartbeat(String replicaId, Duration ttl);

  /** The replicas whose last heartbeat has not expired yet. */
  Set<String> liveReplicas();

  /** Removes a replica's heartbeat and releases every lease it holds (a clean shutdown). */
  void retireReplica(String replicaId);

  /**
   * Takes the lease {@code name} for {@code holder} until {@code ttl} from now, or renews it when
   * {@code holder} has it already; true when {@code holder} holds it now. At most one holder at a
   * time, across every control plane using this store.
   */
  boolean tryLease(String name, String holder, Duration ttl);

  /** Gives the lease up if {@code holder} holds it; otherwise does nothing. */
  void releaseLease(String name, String holder);

  /** Closes connections (and the pool). */
  @Override
  void close();
}
