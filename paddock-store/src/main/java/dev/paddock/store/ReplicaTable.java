package dev.paddock.store;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Clock;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The {@code replicas} (heartbeats) and {@code leases} tables (V4). Times are read from the store's
 * clock, so every replica compares expiries with its own clock: replicas need clocks kept close
 * (NTP), a skew well below the lease time.
 *
 * <p>A lease is taken by one conditional {@code UPDATE} (free, expired or already ours) and, when
 * no row exists yet, an {@code INSERT ... ON CONFLICT DO NOTHING}. On PostgreSQL two racing {@code
 * UPDATE}s of one row serialise on its row lock and the second re-checks the condition against the
 * first's result, so exactly one wins; SQLite has one writer at a time.
 */
final class ReplicaTable {
  private final Database database;
  private final Clock clock;

  ReplicaTable(Database database, Clock clock) {
    this.database = database;
    this.clock = clock;
  }

  void heartbeat(String replicaId, Duration ttl) {
    long now = clock.millis();
    database.transaction(
        "record the heartbeat of replica '" + replicaId + "'",
        connection -> {
          try (PreparedStatement upsert =
              connection.prepareStatement(
                  "INSERT INTO replicas (id, started_at, expires_at) VALUES (?, ?, ?)"
                      + " ON CONFLICT (id) DO UPDATE SET expires_at = excluded.expires_at")) {
            upsert.setString(1, replicaId);
            upsert.setLong(2, now);
            upsert.setLong(3, now + ttl.toMillis());
            upsert.executeUpdate();
          }
          // Long-gone replicas are forgotten, so the table stays as small as the fleet.
          try (PreparedStatement prune =
              connection.prepareStatement("DELETE FROM replicas WHERE expires_at < ?")) {
            prune.setLong(1, now - Duration.ofDays(1).toMillis());
            prune.executeUpdate();
          }
          return null;
        });
  }

  Set<String> live() {
    return database.run(
        "list live replicas",
        connection -> {
          try (PreparedStatement query =
              connection.prepareStatement("SELECT id FROM replicas WHERE expires_at > ?")) {
            query.setLong(1, clock.millis());
            List<String> ids = Database.rows(query, row -> row.getString(1));
            return new HashSet<>(ids);
          }
        });
  }

  void retire(String replicaId) {
    database.transaction(
        "retire replica '" + replicaId + "'",
        connection -> {
          delete(connection, "DELETE FROM replicas WHERE id = ?", replicaId);
          delete(connection, "DELETE FROM leases WHERE holder = ?", replicaId);
          return null;
        });
  }

  boolean tryLease(String name, String holder, Duration ttl) {
    long now = clock.millis();
    return database.transaction(
        "take lease '" + name + "' for '" + holder + "'",
        connection -> {
          try (PreparedStatement take =
              connection.prepareStatement(
                  "UPDATE leases SET holder = ?, expires_at = ?"
                      + " WHERE name = ? AND (holder = ? OR expires_at <= ?)")) {
            take.setString(1, holder);
            take.setLong(2, now + ttl.toMillis());
            take.setString(3, name);
            take.setString(4, holder);
            take.setLong(5, now);
            if (take.executeUpdate() > 0) {
              return true;
            }
          }
          try (PreparedStatement insert =
              connection.prepareStatement(
                  "INSERT INTO leases (name, holder, expires_at) VALUES (?, ?, ?)"
                      + " ON CONFLICT (name) DO NOTHING")) {
            insert.setString(1, name);
            insert.setString(2, holder);
            insert.setLong(3, now + ttl.toMillis());
            return insert.executeUpdate() > 0;
          }
        });
  }

  void releaseLease(String name, String holder) {
    database.transaction(
        "release lease '" + name + "'",
        connection -> {
          try (PreparedStatement release =
              connection.prepareStatement("DELETE FROM leases WHERE name = ? AND holder = ?")) {
            release.setString(1, name);
            release.setString(2, holder);
            release.executeUpdate();
          }
          return null;
        });
  }

  private static void delete(Connection connection, String sql, String value) throws SQLException {
    try (PreparedStatement delete = connection.prepareStatement(sql)) {
      delete.setString(1, value);
      delete.executeUpdate();
    }
  }
}
