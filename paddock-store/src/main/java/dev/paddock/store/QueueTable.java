package dev.paddock.store;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/** The {@code start_queue} table. */
final class QueueTable {
  private static final String COLUMNS =
      "sandbox_id, owner, turn, enqueued_at, deadline, holder, lease_until";

  private final Database database;

  QueueTable(Database database) {
    this.database = database;
  }

  QueueEntry insert(QueueEntry entry) {
    QueueEntry stored =
        new QueueEntry(
            entry.sandboxId(),
            entry.owner(),
            entry.turn(),
            Times.truncate(entry.enqueuedAt()),
            Times.truncate(entry.deadline()),
            entry.holder(),
            Times.truncate(entry.leaseUntil()));
    database.run(
        "queue sandbox '" + entry.sandboxId() + "'",
        connection -> {
          try (PreparedStatement insert =
              connection.prepareStatement(
                  "INSERT INTO start_queue (" + COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?, ?)")) {
            insert.setString(1, stored.sandboxId());
            insert.setString(2, stored.owner().orElse(""));
            insert.setLong(3, stored.turn());
            insert.setLong(4, stored.enqueuedAt().toEpochMilli());
            insert.setLong(5, stored.deadline().toEpochMilli());
            insert.setString(6, stored.holder());
            insert.setLong(7, stored.leaseUntil().toEpochMilli());
            return insert.executeUpdate();
          }
        });
    return stored;
  }

  List<QueueEntry> all() {
    return database.run(
        "list the start queue",
        connection -> {
          try (PreparedStatement query =
              connection.prepareStatement(
                  "SELECT "
                      + COLUMNS
                      + " FROM start_queue ORDER BY turn, enqueued_at, sandbox_id")) {
            return Database.rows(query, QueueTable::read);
          }
        });
  }

  int renew(String holder, Collection<String> sandboxIds, Instant until) {
    if (sandboxIds.isEmpty()) {
      return 0;
    }
    String marks = String.join(", ", java.util.Collections.nCopies(sandboxIds.size(), "?"));
    return database.run(
        "renew " + sandboxIds.size() + " queue lease(s)",
        connection -> {
          try (PreparedStatement update =
              connection.prepareStatement(
                  "UPDATE start_queue SET lease_until = ? WHERE holder = ? AND sandbox_id IN ("
                      + marks
                      + ")")) {
            update.setLong(1, Times.truncate(until).toEpochMilli());
            update.setString(2, holder);
            int i = 3;
            for (String id : sandboxIds) {
              update.setString(i++, id);
            }
            return update.executeUpdate();
          }
        });
  }

  boolean remove(String sandboxId) {
    return database.run(
        "remove sandbox '" + sandboxId + "' from the start queue",
        connection -> {
          try (PreparedStatement delete =
              connection.prepareStatement("DELETE FROM start_queue WHERE sandbox_id = ?")) {
            delete.setString(1, sandboxId);
            return delete.executeUpdate() > 0;
          }
        });
  }

  private static QueueEntry read(ResultSet row) throws SQLException {
    String owner = row.getString("owner");
    return new QueueEntry(
        row.getString("sandbox_id"),
        owner.isEmpty() ? Optional.empty() : Optional.of(owner),
        row.getLong("turn"),
        Instant.ofEpochMilli(row.getLong("enqueued_at")),
        Instant.ofEpochMilli(row.getLong("deadline")),
        row.getString("holder"),
        Instant.ofEpochMilli(row.getLong("lease_until")));
  }
}
