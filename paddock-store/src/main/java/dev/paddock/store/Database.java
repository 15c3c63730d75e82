package dev.paddock.store;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Runs units of work on pooled connections and turns every {@link SQLException} into a {@link
 * StoreException} (or a {@link ConflictException}) whose message names the operation; while the
 * database is known to be unreachable ({@link Reachability}) a unit of work fails at once, before
 * asking the pool. Thread-safe: each unit of work has a connection of its own.
 */
final class Database implements AutoCloseable {
  /** A unit of work on one connection. */
  @FunctionalInterface
  interface Work<T> {
    T run(Connection connection) throws SQLException;
  }

  /** Maps the current row. */
  @FunctionalInterface
  interface RowMapper<T> {
    T map(ResultSet row) throws SQLException;
  }

  private final HikariDataSource pool;
  private final Dialect dialect;
  private final Reachability reachability;

  Database(HikariDataSource pool, Dialect dialect, Reachability reachability) {
    this.pool = pool;
    this.dialect = dialect;
    this.reachability = reachability;
  }

  /** Whether the database answered the pool's last attempt to connect. */
  Reachability reachability() {
    return reachability;
  }

  Dialect dialect() {
    return dialect;
  }

  /** Runs {@code work} in auto-commit mode; {@code operation} reads "insert sandbox 'x'". */
  <T> T run(String operation, Work<T> work) {
    reachability.requireReachable(operation);
    try (Connection connection = pool.getConnection()) {
      return work.run(connection);
    } catch (SQLException e) {
      throw failure(operation, e);
    }
  }

  /**
   * Runs {@code work} in one transaction: committed when it returns, rolled back when it throws.
   */
  <T> T transaction(String operation, Work<T> work) {
    reachability.requireReachable(operation);
    try (Connection connection = pool.getConnection()) {
      connection.setAutoCommit(false);
      try {
        T result = work.run(connection);
        connection.commit();
        return result;
      } catch (SQLException | RuntimeException e) {
        rollback(connection, e);
        throw e;
      }
      // The pool restores auto-commit when the connection returns.
    } catch (SQLException e) {
      throw failure(operation, e);
    }
  }

  /** Every row of the statement's result. */
  static <T> List<T> rows(PreparedStatement statement, RowMapper<T> mapper) throws SQLException {
    try (ResultSet row = statement.executeQuery()) {
      List<T> result = new ArrayList<>();
      while (row.next()) {
        result.add(mapper.map(row));
      }
      return result;
    }
  }

  /** The first row of the statement's result, if any. */
  static <T> Optional<T> first(PreparedStatement statement, RowMapper<T> mapper)
      throws SQLException {
    try (ResultSet row = statement.executeQuery()) {
      return row.next() ? Optional.of(mapper.map(row)) : Optional.empty();
    }
  }

  StoreException failure(String operation, SQLException e) {
    if (dialect.isConflict(e)) {
      return new ConflictException(
          "Could not "
              + operation
              + ": a unique value is already taken or a referenced row is"
              + " gone ("
              + e.getMessage()
              + "); re-read and retry",
          e);
    }
    return new StoreException(
        "Store failed to "
            + operation
            + " ("
            + dialect.scriptSuffix()
            + ", SQLState "
            + e.getSQLState()
            + "): "
            + e.getMessage(),
        e);
  }

  private static void rollback(Connection connection, Exception cause) {
    try {
      connection.rollback();
    } catch (SQLException rollbackFailure) {
      cause.addSuppressed(rollbackFailure);
    }
  }

  @Override
  public void close() {
    pool.close();
  }
}
