package dev.paddock.store;

import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** The {@code webhook_events}, {@code conversations} and {@code conversation_claims} tables. */
final class WebhookTable {
  private final Database database;
  private final Clock clock;

  WebhookTable(Database database, Clock clock) {
    this.database = database;
    this.clock = clock;
  }

  /**
   * Appends under the conversation's lock: claims the conversation for the sandbox at first use,
   * refuses another sandbox's events, then drops the oldest events beyond the quota.
   */
  AppendedEvents appendEvents(
      String sandboxId, String conversationId, List<String> json, WebhookQuota quota) {
    if (json.isEmpty()) {
      return new AppendedEvents(List.of(), 0);
    }
    Instant receivedAt = Times.now(clock);
    return database.transaction(
        "store " + json.size() + " events of conversation '" + conversationId + "'",
        connection -> {
          database.dialect().lockConversation(connection, conversationId);
          Usage usage = claim(connection, sandboxId, conversationId, quota, receivedAt);
          List<WebhookEvent> stored = new ArrayList<>(json.size());
          long bytes = 0;
          // RETURNING (SQLite 3.35+, PostgreSQL) reads the assigned sequence the same way on both.
          try (PreparedStatement insert =
              connection.prepareStatement(
                  "INSERT INTO webhook_events"
                      + " (sandbox_id, conversation_id, json, received_at, byte_count)"
                      + " VALUES (?, ?, ?, ?, ?) RETURNING sequence")) {
            for (String event : json) {
              int size = event.getBytes(StandardCharsets.UTF_8).length;
              insert.setString(1, sandboxId);
              insert.setString(2, conversationId);
              insert.setString(3, event);
              insert.setLong(4, receivedAt.toEpochMilli());
              insert.setLong(5, size);
              long sequence = Database.first(insert, row -> row.getLong(1)).orElseThrow();
              stored.add(new WebhookEvent(sequence, sandboxId, conversationId, event, receivedAt));
              bytes += size;
            }
          }
          Usage grown = new Usage(usage.events() + stored.size(), usage.bytes() + bytes);
          return new AppendedEvents(stored, retain(connection, conversationId, grown, quota));
        });
  }

  /** Events and bytes a conversation holds now. */
  private record Usage(long events, long bytes) {}

  /** Who owns a conversation, and what it holds. */
  private record Claim(String sandboxId, String owner, Usage usage) {}

  /**
   * The conversation's usage once it is known to be the sandbox's: claimed now if nobody has it
   * (within the sandbox's conversation quota), refused if another sandbox or owner claimed it.
   */
  private Usage claim(
      Connection connection,
      String sandboxId,
      String conversationId,
      WebhookQuota quota,
      Instant now)
      throws SQLException {
    String owner = owner(connection, sandboxId);
    Optional<Claim> claim;
    try (PreparedStatement query =
        connection.prepareStatement(
            "SELECT sandbox_id, owner, event_count, event_bytes FROM conversation_claims"
                + " WHERE conversation_id = ?")) {
      query.setString(1, conversationId);
      claim =
          Database.first(
              query,
              row ->
                  new Claim(
                      row.getString(1),
                      row.getString(2),
                      new Usage(row.getLong(3), row.getLong(4))));
    }
    if (claim.isPresent()) {
      if (!claim.get().sandboxId().equals(sandboxId) || !claim.get().owner().equals(owner)) {
        // The same answer whoever owns it: the caller learns nothing about the other tenant.
        throw new ConversationRefusedException(
            ConversationRefusedException.Reason.NOT_THIS_SANDBOX,
            "conversation '" + conversationId + "' is not this sandbox's; use another id");
      }
      return claim.get().usage();
    }
    insertClaim(connection, sandboxId, owner, conversationId, quota, now);
    return new Usage(0, 0);
  }

  private void insertClaim(
      Connection connection,
      String sandboxId,
      String owner,
      String conversationId,
      WebhookQuota quota,
      Instant now)
      throws SQLException {
    // Serialises the count-then-insert of one sandbox's claims (PostgreSQL; SQLite's write lock
    // already does); a conversation id of that form only costs a little waiting. Always taken after
    // a conversation lock, never before: one order, no deadlock.
    database.dialect().lockConversation(connection, "sandbox/" + sandboxId);
    try (PreparedStatement count =
        connection.prepareStatement(
            "SELECT COUNT(*) FROM conversation_claims WHERE sandbox_id = ? AND owner = ?")) {
      count.setString(1, sandboxId);
      count.setString(2, owner);
      long owned = Database.first(count, row -> row.getLong(1)).orElse(0L);
      if (owned >= quota.maxConversationsPerSandbox()) {
        throw new ConversationRefusedException(
            ConversationRefusedException.Reason.TOO_MANY_CONVERSATIONS,
            "this sandbox already has "
                + owned
                + " conversations, the most allowed (PADDOCK_WEBHOOK_MAX_CONVERSATIONS)");
      }
    }
    try (PreparedStatement insert =
        connection.prepareStatement(
            "INSERT INTO conversation_claims (conversation_id, sandbox_id, owner, event_count,"
                + " event_bytes, claimed_at) VALUES (?, ?, ?, 0, 0, ?)")) {
      insert.setString(1, conversationId);
      insert.setString(2, sandboxId);
      insert.setString(3, owner);
      insert.setLong(4, now.toEpochMilli());
      insert.executeUpdate();
    }
  }

  /** The sandbox's owner now ('' when it has none or is not in the store). */
  private static String owner(Connection connection, String sandboxId) throws SQLException {
    try (PreparedStatement query =
        connection.prepareStatement("SELECT owner FROM sandboxes WHERE id = ?")) {
      query.setString(1, sandboxId);
      return Database.first(query, row -> Optional.ofNullable(row.getString(1)).orElse(""))
          .orElse("");
    }
  }

  /** Drops the oldest events until the conversation fits its quota; records the usage. */
  private static long retain(
      Connection connection, String conversationId, Usage usage, WebhookQuota quota)
      throws SQLException {
    long events = usage.events();
    long bytes = usage.bytes();
    long dropped = 0;
    if (events > quota.maxEventsPerConversation() || bytes > quota.maxBytesPerConversation()) {
      long cutoff = -1;
      try (PreparedStatement oldest =
          connection.prepareStatement(
              "SELECT sequence, byte_count FROM webhook_events WHERE conversation_id = ?"
                  + " ORDER BY sequence")) {
        oldest.setString(1, conversationId);
        try (ResultSet row = oldest.executeQuery()) {
          while ((events > quota.maxEventsPerConversation()
                  || bytes > quota.maxBytesPerConversation())
              && row.next()) {
            cutoff = row.getLong(1);
            bytes -= row.getLong(2);
            events--;
            dropped++;
          }
        }
      }
      try (PreparedStatement delete =
          connection.prepareStatement(
              "DELETE FROM webhook_events WHERE conversation_id = ? AND sequence <= ?")) {
        delete.setString(1, conversationId);
        delete.setLong(2, cutoff);
        delete.executeUpdate();
      }
    }
    try (PreparedStatement update =
        connection.prepareStatement(
            "UPDATE conversation_claims SET event_count = ?, event_bytes = ?"
                + " WHERE conversation_id = ?")) {
      update.setLong(1, events);
      update.setLong(2, bytes);
      update.setString(3, conversationId);
      update.executeUpdate();
    }
    return dropped;
  }

  List<WebhookEvent> events(String conversationId, long afterSequence, int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1, got " + limit);
    }
    return database.run(
        "read events of conversation '" + conversationId + "'",
        connection -> {
          try (PreparedStatement query =
              connection.prepareStatement(
                  "SELECT sequence, sandbox_id, conversation_id, json, received_at"
                      + " FROM webhook_events WHERE conversation_id = ? AND sequence > ?"
                      + " ORDER BY sequence LIMIT ?")) {
            query.setString(1, conversationId);
            query.setLong(2, afterSequence);
            query.setInt(3, limit);
            return Database.rows(query, WebhookTable::readEvent);
          }
        });
  }

  /** Inserts or replaces the document of a conversation the sandbox owns (or claims now). */
  void upsertConversation(
      String conversationId, String sandboxId, String json, WebhookQuota quota) {
    Instant now = Times.now(clock);
    database.transaction(
        "store conversation '" + conversationId + "'",
        connection -> {
          database.dialect().lockConversation(connection, conversationId);
          claim(connection, sandboxId, conversationId, quota, now);
          try (PreparedStatement upsert =
              connection.prepareStatement(
                  "INSERT INTO conversations (id, sandbox_id, json, updated_at)"
                      + " VALUES (?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET"
                      + " json = excluded.json, updated_at = excluded.updated_at")) {
            upsert.setString(1, conversationId);
            upsert.setString(2, sandboxId);
            upsert.setString(3, json);
            upsert.setLong(4, now.toEpochMilli());
            return upsert.executeUpdate();
          }
        });
  }

  Optional<String> conversation(String conversationId) {
    return database.run(
        "read conversation '" + conversationId + "'",
        connection -> {
          try (PreparedStatement query =
              connection.prepareStatement("SELECT json FROM conversations WHERE id = ?")) {
            query.setString(1, conversationId);
            return Database.first(query, row -> row.getString(1));
          }
        });
  }

  private static WebhookEvent readEvent(ResultSet row) throws SQLException {
    return new WebhookEvent(
        row.getLong("sequence"),
        row.getString("sandbox_id"),
        row.getString("conversation_id"),
        row.getString("json"),
        Instant.ofEpochMilli(row.getLong("received_at")));
  }
}
