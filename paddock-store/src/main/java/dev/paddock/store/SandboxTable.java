package dev.paddock.store;

import dev.paddock.api.Page;
import dev.paddock.api.PageRequest;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.RuntimeHandle;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/** The {@code sandboxes} table. */
final class SandboxTable {
  private static final String COLUMNS =
      "id, owner, spec_id, status, session_key_hash, runtime_backend, runtime_attributes,"
          + " status_detail, created_at, updated_at, version";

  private final Database database;
  private final Clock clock;

  SandboxTable(Database database, Clock clock) {
    this.database = database;
    this.clock = clock;
  }

  SandboxRecord insert(SandboxRecord record) {
    SandboxRecord stored = withVersion(record, record.updatedAt(), 0);
    database.run(
        "insert sandbox '" + record.id() + "'",
        connection -> {
          try (PreparedStatement insert =
              connection.prepareStatement(
                  "INSERT INTO sandboxes ("
                      + COLUMNS
                      + ") VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")) {
            insert.setString(1, stored.id());
            bindFields(insert, 2, stored);
            insert.setLong(9, stored.createdAt().toEpochMilli());
            insert.setLong(10, stored.updatedAt().toEpochMilli());
            insert.setLong(11, 0);
            return insert.executeUpdate();
          }
        });
    return stored;
  }

  Optional<SandboxRecord> find(String sandboxId) {
    return database.run(
        "find sandbox '" + sandboxId + "'", connection -> findOne(connection, "id", sandboxId));
  }

  Optional<SandboxRecord> findBySessionKeyHash(String keyHash) {
    return database.run(
        "find a sandbox by session key hash",
        connection -> findOne(connection, "session_key_hash", keyHash));
  }

  SandboxRecord update(SandboxRecord record) {
    Instant now = Times.now(clock);
    Instant updatedAt = now.isAfter(record.updatedAt()) ? now : record.updatedAt();
    SandboxRecord stored = withVersion(record, updatedAt, record.version() + 1);
    int changed =
        database.run(
            "update sandbox '" + record.id() + "'",
            connection -> {
              try (PreparedStatement update =
                  connection.prepareStatement(
                      "UPDATE sandboxes SET owner = ?, spec_id = ?, status = ?,"
                          + " session_key_hash = ?, runtime_backend = ?, runtime_attributes = ?,"
                          + " status_detail = ?, updated_at = ?, version = ?"
                          + " WHERE id = ? AND version = ?")) {
                bindFields(update, 1, stored);
                update.setLong(8, stored.updatedAt().toEpochMilli());
                update.setLong(9, stored.version());
                update.setString(10, stored.id());
                update.setLong(11, record.version());
                return update.executeUpdate();
              }
            });
    if (changed == 0) {
      throw new ConflictException(
          "Could not update sandbox '"
              + record.id()
              + "': it changed since version "
              + record.version()
              + " was read, or it is gone; re-read it and decide again");
    }
    return stored;
  }

  boolean delete(String sandboxId) {
    return database.run(
        "delete sandbox '" + sandboxId + "'",
        connection -> {
          try (PreparedStatement delete =
              connection.prepareStatement("DELETE FROM sandboxes WHERE id = ?")) {
            delete.setString(1, sandboxId);
            return delete.executeUpdate() > 0;
          }
        });
  }

  Page<SandboxRecord> page(Optional<String> owner, PageRequest request) {
    Optional<PageCursor> after = request.pageId().map(PageCursor::decode);
    List<SandboxRecord> rows =
        database.run(
            "list sandboxes" + owner.map(o -> " of user '" + o + "'").orElse(""),
            connection -> pageRows(connection, owner, after, request.limit() + 1));
    if (rows.size() <= request.limit()) {
      return new Page<>(rows, Optional.empty());
    }
    List<SandboxRecord> items = rows.subList(0, request.limit());
    SandboxRecord last = items.getLast();
    return new Page<>(
        items, Optional.of(new PageCursor(last.createdAt().toEpochMilli(), last.id()).encode()));
  }

  List<SandboxRecord> withStatus(Collection<SandboxStatus> statuses) {
    if (statuses.isEmpty()) {
      return List.of();
    }
    String marks = String.join(", ", Collections.nCopies(statuses.size(), "?"));
    return database.run(
        "list sandboxes with status " + statuses,
        connection -> {
          try (PreparedStatement query =
              connection.prepareStatement(
                  "SELECT "
                      + COLUMNS
                      + " FROM sandboxes WHERE status IN ("
                      + marks
                      + ") ORDER BY created_at, id")) {
            int index = 1;
            for (SandboxStatus status : statuses) {
              query.setString(index++, status.name());
            }
            return Database.rows(query, SandboxTable::read);
          }
        });
  }

  private static List<SandboxRecord> pageRows(
      Connection connection, Optional<String> owner, Optional<PageCursor> after, int limit)
      throws SQLException {
    List<String> conditions = new ArrayList<>();
    owner.ifPresent(o -> conditions.add("owner = ?"));
    after.ifPresent(c -> conditions.add("(created_at, id) < (?, ?)"));
    String where = conditions.isEmpty() ? "" : " WHERE " + String.join(" AND ", conditions);
    try (PreparedStatement query =
        connection.prepareStatement(
            "SELECT "
                + COLUMNS
                + " FROM sandboxes"
                + where
                + " ORDER BY created_at DESC, id DESC LIMIT ?")) {
      int index = 1;
      if (owner.isPresent()) {
        query.setString(index++, owner.get());
      }
      if (after.isPresent()) {
        query.setLong(index++, after.get().createdAtMillis());
        query.setString(index++, after.get().id());
      }
      query.setInt(index, limit);
      return Database.rows(query, SandboxTable::read);
    }
  }

  private static Optional<SandboxRecord> findOne(Connection connection, String column, String value)
      throws SQLException {
    try (PreparedStatement query =
        connection.prepareStatement(
            "SELECT " + COLUMNS + " FROM sandboxes WHERE " + column + " = ?")) {
      query.setString(1, value);
      return Database.first(query, SandboxTable::read);
    }
  }

  /** Binds owner .. status_detail (seven parameters) starting at {@code first}. */
  private static void bindFields(PreparedStatement statement, int first, SandboxRecord record)
      throws SQLException {
    setNullable(statement, first, record.ownerUserId());
    statement.setString(first + 1, record.specId());
    statement.setString(first + 2, record.status().name());
    setNullable(statement, first + 3, record.sessionKeyHash());
    setNullable(statement, first + 4, record.runtime().map(RuntimeHandle::backend));
    setNullable(
        statement,
        first + 5,
        record.runtime().map(handle -> RuntimeAttributes.toJson(handle.attributes())));
    setNullable(statement, first + 6, record.statusDetail());
  }

  private static void setNullable(PreparedStatement statement, int index, Optional<String> value)
      throws SQLException {
    if (value.isPresent()) {
      statement.setString(index, value.get());
    } else {
      statement.setNull(index, Types.VARCHAR);
    }
  }

  private static SandboxRecord read(ResultSet row) throws SQLException {
    String id = row.getString("id");
    Optional<String> backend = Optional.ofNullable(row.getString("runtime_backend"));
    String attributes = row.getString("runtime_attributes");
    Optional<RuntimeHandle> runtime =
        backend.map(
            name ->
                new RuntimeHandle(
                    id,
                    name,
                    attributes == null ? Map.of() : RuntimeAttributes.fromJson(attributes, id)));
    return new SandboxRecord(
        id,
        Optional.ofNullable(row.getString("owner")),
        row.getString("spec_id"),
        SandboxStatus.valueOf(row.getString("status")),
        Optional.ofNullable(row.getString("session_key_hash")),
        runtime,
        Optional.ofNullable(row.getString("status_detail")),
        Instant.ofEpochMilli(row.getLong("created_at")),
        Instant.ofEpochMilli(row.getLong("updated_at")),
        row.getLong("version"));
  }

  private static SandboxRecord withVersion(SandboxRecord record, Instant updatedAt, long version) {
    return new SandboxRecord(
        record.id(),
        record.ownerUserId(),
        record.specId(),
        record.status(),
        record.sessionKeyHash(),
        record.runtime(),
        record.statusDetail(),
        Times.truncate(record.createdAt()),
        Times.truncate(updatedAt),
        version);
  }
}
