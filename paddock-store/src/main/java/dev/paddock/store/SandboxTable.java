package dev.paddock.store;

import dev.paddock.api.Page;
import dev.paddock.api.PageRequest;
import dev.paddock.api.SandboxFilter;
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

/**
 * The {@code sandboxes} table, and {@code sandbox_labels} (one row per label, written in the same
 * transaction as its sandbox) for label selectors.
 */
final class SandboxTable {
  private static final String COLUMNS =
      "id, owner, spec_id, status, session_key_hash, runtime_backend, runtime_attributes,"
          + " status_detail, created_at, updated_at, version, "
          + SettingsColumns.NAMES;
  private static final String MARKS =
      String.join(", ", Collections.nCopies(11 + SettingsColumns.COUNT, "?"));

  private final Database database;
  private final Clock clock;

  SandboxTable(Database database, Clock clock) {
    this.database = database;
    this.clock = clock;
  }

  SandboxRecord insert(SandboxRecord record) {
    SandboxRecord stored = withVersion(record, record.updatedAt(), 0);
    database.transaction(
        "insert sandbox '" + record.id() + "'",
        connection -> {
          try (PreparedStatement insert =
              connection.prepareStatement(
                  "INSERT INTO sandboxes (" + COLUMNS + ") VALUES (" + MARKS + ")")) {
            insert.setString(1, stored.id());
            bindFields(insert, 2, stored);
            insert.setLong(9, stored.createdAt().toEpochMilli());
            insert.setLong(10, stored.updatedAt().toEpochMilli());
            insert.setLong(11, 0);
            SettingsColumns.bind(insert, 12, stored);
            insert.executeUpdate();
          }
          // Rows left by a sandbox removed outside Paddock must not label this one.
          deleteLabels(connection, stored.id());
          insertLabels(connection, stored);
          return null;
        });
    return stored;
  }

  Optional<SandboxRecord> find(String sandboxId) {
    return database.run(
        "find sandbox '" + sandboxId + "'", connection -> findOne(connection, "id", sandboxId));
  }

  /** One column by primary key: no settings or runtime JSON to parse. */
  java.util.OptionalLong version(String sandboxId) {
    return database.run(
        "read the version of sandbox '" + sandboxId + "'",
        connection -> {
          try (PreparedStatement query =
              connection.prepareStatement("SELECT version FROM sandboxes WHERE id = ?")) {
            query.setString(1, sandboxId);
            try (java.sql.ResultSet row = query.executeQuery()) {
              return row.next()
                  ? java.util.OptionalLong.of(row.getLong(1))
                  : java.util.OptionalLong.empty();
            }
          }
        });
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
        database.transaction(
            "update sandbox '" + record.id() + "'",
            connection -> {
              int rows;
              try (PreparedStatement update =
                  connection.prepareStatement(
                      "UPDATE sandboxes SET owner = ?, spec_id = ?, status = ?,"
                          + " session_key_hash = ?, runtime_backend = ?, runtime_attributes = ?,"
                          + " status_detail = ?, updated_at = ?, version = ?, "
                          + SETTINGS_ASSIGNMENTS
                          + " WHERE id = ? AND version = ?")) {
                bindFields(update, 1, stored);
                update.setLong(8, stored.updatedAt().toEpochMilli());
                update.setLong(9, stored.version());
                SettingsColumns.bind(update, 10, stored);
                update.setString(10 + SettingsColumns.COUNT, stored.id());
                update.setLong(11 + SettingsColumns.COUNT, record.version());
                rows = update.executeUpdate();
              }
              if (rows > 0) {
                deleteLabels(connection, stored.id());
                insertLabels(connection, stored);
              }
              return rows;
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
    return database.transaction(
        "delete sandbox '" + sandboxId + "'",
        connection -> {
          deleteLabels(connection, sandboxId);
          try (PreparedStatement delete =
              connection.prepareStatement("DELETE FROM sandboxes WHERE id = ?")) {
            delete.setString(1, sandboxId);
            return delete.executeUpdate() > 0;
          }
        });
  }

  private static final String SETTINGS_ASSIGNMENTS =
      String.join(
          ", ",
          java.util.Arrays.stream(SettingsColumns.NAMES.split(","))
              .map(name -> name.strip() + " = ?")
              .toList());

  private static void deleteLabels(Connection connection, String sandboxId) throws SQLException {
    try (PreparedStatement delete =
        connection.prepareStatement("DELETE FROM sandbox_labels WHERE sandbox_id = ?")) {
      delete.setString(1, sandboxId);
      delete.executeUpdate();
    }
  }

  private static void insertLabels(Connection connection, SandboxRecord record)
      throws SQLException {
    if (record.settings().labels().isEmpty()) {
      return;
    }
    try (PreparedStatement insert =
        connection.prepareStatement(
            "INSERT INTO sandbox_labels (sandbox_id, name, value) VALUES (?, ?, ?)")) {
      for (Map.Entry<String, String> label : record.settings().labels().entrySet()) {
        insert.setString(1, record.id());
        insert.setString(2, label.getKey());
        insert.setString(3, label.getValue());
        insert.addBatch();
      }
      insert.executeBatch();
    }
  }

  Page<SandboxRecord> page(Optional<String> owner, SandboxFilter filter, PageRequest request) {
    Optional<PageCursor> after = request.pageId().map(PageCursor::decode);
    List<SandboxRecord> rows =
        database.run(
            "list sandboxes" + owner.map(o -> " of user '" + o + "'").orElse(""),
            connection -> pageRows(connection, owner, filter, after, request.limit() + 1));
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
      Connection connection,
      Optional<String> owner,
      SandboxFilter filter,
      Optional<PageCursor> after,
      int limit)
      throws SQLException {
    List<String> conditions = new ArrayList<>();
    List<String> values = new ArrayList<>();
    owner.ifPresent(
        o -> {
          conditions.add("owner = ?");
          values.add(o);
        });
    filterConditions(filter, conditions, values);
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
      for (String value : values) {
        query.setString(index++, value);
      }
      if (after.isPresent()) {
        query.setLong(index++, after.get().createdAtMillis());
        query.setString(index++, after.get().id());
      }
      query.setInt(index, limit);
      return Database.rows(query, SandboxTable::read);
    }
  }

  /** Status IN, spec and one EXISTS per label (answered by the labels' primary key). */
  private static void filterConditions(
      SandboxFilter filter, List<String> conditions, List<String> values) {
    if (!filter.statuses().isEmpty()) {
      conditions.add(
          "status IN ("
              + String.join(", ", Collections.nCopies(filter.statuses().size(), "?"))
              + ")");
      filter.statuses().stream().map(Enum::name).sorted().forEach(values::add);
    }
    filter
        .specId()
        .ifPresent(
            spec -> {
              conditions.add("spec_id = ?");
              values.add(spec);
            });
    filter
        .labels()
        .forEach(
            (name, value) -> {
              conditions.add(
                  "EXISTS (SELECT 1 FROM sandbox_labels l WHERE l.sandbox_id = sandboxes.id"
                      + " AND l.name = ? AND l.value = ?)");
              values.add(name);
              values.add(value);
            });
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
        row.getLong("version"),
        SettingsColumns.settings(row),
        SettingsColumns.instant(row, "timeout_at"),
        SettingsColumns.instant(row, "last_activity_at"),
        row.getLong("key_generation"),
        SettingsColumns.operation(row));
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
        version,
        record.settings(),
        record.timeoutAt().map(Times::truncate),
        record.lastActivityAt().map(Times::truncate),
        record.keyGeneration(),
        record.operation());
  }
}
