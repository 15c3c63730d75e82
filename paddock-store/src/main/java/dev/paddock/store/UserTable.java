package dev.paddock.store;

import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/** The {@code users} and {@code api_keys} tables. */
final class UserTable {
  private static final String USER_COLUMNS = "id, name, admin, created_at";
  private static final String KEY_COLUMNS = "id, user_id, key_hash, label, created_at, revoked_at";

  private final Database database;

  UserTable(Database database) {
    this.database = database;
  }

  UserRecord insertUser(UserRecord user) {
    UserRecord stored =
        new UserRecord(user.id(), user.name(), user.admin(), Times.truncate(user.createdAt()));
    database.run(
        "insert user '" + user.name() + "'",
        connection -> {
          try (PreparedStatement insert =
              connection.prepareStatement(
                  "INSERT INTO users (" + USER_COLUMNS + ") VALUES (?, ?, ?, ?)")) {
            insert.setString(1, stored.id());
            insert.setString(2, stored.name());
            insert.setBoolean(3, stored.admin());
            insert.setLong(4, stored.createdAt().toEpochMilli());
            return insert.executeUpdate();
          }
        });
    return stored;
  }

  Optional<UserRecord> findUser(String column, String value) {
    return database.run(
        "find user by " + column + " '" + value + "'",
        connection -> {
          try (PreparedStatement query =
              connection.prepareStatement(
                  "SELECT " + USER_COLUMNS + " FROM users WHERE " + column + " = ?")) {
            query.setString(1, value);
            return Database.first(query, UserTable::readUser);
          }
        });
  }

  List<UserRecord> users() {
    return database.run(
        "list users",
        connection -> {
          try (PreparedStatement query =
              connection.prepareStatement(
                  "SELECT " + USER_COLUMNS + " FROM users ORDER BY created_at, id")) {
            return Database.rows(query, UserTable::readUser);
          }
        });
  }

  ApiKeyRecord insertApiKey(ApiKeyRecord key) {
    ApiKeyRecord stored =
        new ApiKeyRecord(
            key.id(),
            key.userId(),
            key.keyHash(),
            key.label(),
            Times.truncate(key.createdAt()),
            key.revokedAt().map(Times::truncate));
    database.run(
        "insert API key '" + key.id() + "' of user '" + key.userId() + "'",
        connection -> {
          try (PreparedStatement insert =
              connection.prepareStatement(
                  "INSERT INTO api_keys (" + KEY_COLUMNS + ") VALUES (?, ?, ?, ?, ?, ?)")) {
            insert.setString(1, stored.id());
            insert.setString(2, stored.userId());
            insert.setString(3, stored.keyHash());
            insert.setString(4, stored.label());
            insert.setLong(5, stored.createdAt().toEpochMilli());
            if (stored.revokedAt().isPresent()) {
              insert.setLong(6, stored.revokedAt().get().toEpochMilli());
            } else {
              insert.setNull(6, Types.BIGINT);
            }
            return insert.executeUpdate();
          }
        });
    return stored;
  }

  Optional<ApiKeyRecord> findApiKeyByHash(String keyHash) {
    return database.run(
        "find an API key by hash",
        connection -> {
          try (PreparedStatement query =
              connection.prepareStatement(
                  "SELECT " + KEY_COLUMNS + " FROM api_keys WHERE key_hash = ?")) {
            query.setString(1, keyHash);
            return Database.first(query, UserTable::readKey);
          }
        });
  }

  List<ApiKeyRecord> apiKeys(String userId) {
    return database.run(
        "list API keys of user '" + userId + "'",
        connection -> {
          try (PreparedStatement query =
              connection.prepareStatement(
                  "SELECT "
                      + KEY_COLUMNS
                      + " FROM api_keys WHERE user_id = ? ORDER BY created_at, id")) {
            query.setString(1, userId);
            return Database.rows(query, UserTable::readKey);
          }
        });
  }

  /** Sets revoked_at where {@code column} equals {@code value} and the key is not revoked yet. */
  int revoke(String column, String value, Instant when) {
    return database.run(
        "revoke API keys by " + column + " '" + value + "'",
        connection -> {
          try (PreparedStatement update =
              connection.prepareStatement(
                  "UPDATE api_keys SET revoked_at = ? WHERE "
                      + column
                      + " = ? AND revoked_at IS NULL")) {
            update.setLong(1, when.toEpochMilli());
            update.setString(2, value);
            return update.executeUpdate();
          }
        });
  }

  private static UserRecord readUser(ResultSet row) throws SQLException {
    return new UserRecord(
        row.getString("id"),
        row.getString("name"),
        row.getBoolean("admin"),
        Instant.ofEpochMilli(row.getLong("created_at")));
  }

  private static ApiKeyRecord readKey(ResultSet row) throws SQLException {
    long revokedAt = row.getLong("revoked_at");
    Optional<Instant> revoked =
        row.wasNull() ? Optional.empty() : Optional.of(Instant.ofEpochMilli(revokedAt));
    return new ApiKeyRecord(
        row.getString("id"),
        row.getString("user_id"),
        row.getString("key_hash"),
        row.getString("label"),
        Instant.ofEpochMilli(row.getLong("created_at")),
        revoked);
  }
}
