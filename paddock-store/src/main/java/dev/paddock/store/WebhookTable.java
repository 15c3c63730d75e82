package dev.paddock.store;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** The {@code webhook_events} and {@code conversations} tables. */
final class WebhookTable {
  private final Database database;
  private final Clock clock;

  WebhookTable(Database database, Clock clock) {
    this.database = database;
    this.clock = clock;
  }

  List<WebhookEvent> appendEvents(String sandboxId, String conversationId, List<String> json) {
    if (json.isEmpty()) {
      return List.of();
    }
    Instant receivedAt = Times.now(clock);
    return database.transaction(
        "store " + json.size() + " events of conversation '" + conversationId + "'",
        connection -> {
          database.dialect().lockConversation(connection, conversationId);
          List<WebhookEvent> stored = new ArrayList<>(json.size());
          // RETURNING (SQLite 3.35+, PostgreSQL) reads the assigned sequence the same way on both.
          try (PreparedStatement insert =
              connection.prepareStatement(
                  "INSERT INTO webhook_events (sandbox_id, conversation_id, json, received_at)"
                      + " VALUES (?, ?, ?, ?) RETURNING sequence")) {
            for (String event : json) {
              insert.setString(1, sandboxId);
              insert.setString(2, conversationId);
              insert.setString(3, event);
              insert.setLong(4, receivedAt.toEpochMilli());
              long sequence = Database.first(insert, row -> row.getLong(1)).orElseThrow();
              stored.add(new WebhookEvent(sequence, sandboxId, conversationId, event, receivedAt));
            }
          }
          return stored;
        });
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

  void upsertConversation(String conversationId, String sandboxId, String json) {
    Instant now = Times.now(clock);
    database.run(
        "store conversation '" + conversationId + "'",
        connection -> {
          try (PreparedStatement upsert =
              connection.prepareStatement(
                  "INSERT INTO conversations (id, sandbox_id, json, updated_at)"
                      + " VALUES (?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET"
                      + " sandbox_id = excluded.sandbox_id, json = excluded.json,"
                      + " updated_at = excluded.updated_at")) {
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
