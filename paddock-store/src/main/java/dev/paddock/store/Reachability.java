package dev.paddock.store;

import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.time.Clock;
import java.time.Instant;
import java.util.Optional;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * Whether the database can be reached, as the pool's own attempts to open a connection last said:
 * one that failed with a connection error (SQLState class 08: refused, reset, unknown host) marks
 * it unreachable, the next that succeeds marks it reachable again. While it is unreachable, {@link
 * Database} fails each unit of work at once instead of letting it wait the pool's connection
 * timeout for a connection that cannot come; the pool goes on reconnecting in the background
 * (HikariCP keeps trying to fill itself to its minimum idle, with a backoff of at most 5 s), and
 * its first success lifts this. Thread-safe: one volatile field.
 */
final class Reachability {
  /** Since when, and the driver's message (for the log only: it may name the host). */
  record Down(Instant since, String cause) {}

  private final Clock clock;
  private volatile Optional<Down> down = Optional.empty();

  Reachability(Clock clock) {
    this.clock = clock;
  }

  /** Empty while the database answers; otherwise since when it has not. */
  Optional<Down> down() {
    return down;
  }

  /**
   * @throws StoreException at once when the last attempt to connect failed to reach it
   */
  void requireReachable(String operation) {
    Optional<Down> now = down;
    if (now.isPresent()) {
      throw new StoreException(
          "Store cannot "
              + operation
              + ": the database has been unreachable since "
              + now.get().since()
              + " ("
              + now.get().cause()
              + "); the pool reconnects by itself once it answers");
    }
  }

  /** {@code source} that tells this about every connection it opens or fails to open. */
  DataSource watch(DataSource source) {
    return new Watched(source);
  }

  private Connection observe(ConnectionAttempt attempt) throws SQLException {
    try {
      Connection connection = attempt.open();
      down = Optional.empty();
      return connection;
    } catch (SQLException e) {
      if (isConnectionFailure(e) && down.isEmpty()) {
        down = Optional.of(new Down(clock.instant(), String.valueOf(e.getMessage())));
      }
      throw e;
    }
  }

  /** SQLState class 08, "connection exception" (SQL:2011): the server could not be reached. */
  static boolean isConnectionFailure(SQLException e) {
    return e.getSQLState() != null && e.getSQLState().startsWith("08");
  }

  @FunctionalInterface
  private interface ConnectionAttempt {
    Connection open() throws SQLException;
  }

  /** Delegates everything to the driver's data source; only opening a connection is observed. */
  private final class Watched implements DataSource {
    private final DataSource source;

    Watched(DataSource source) {
      this.source = source;
    }

    @Override
    public Connection getConnection() throws SQLException {
      return observe(source::getConnection);
    }

    @Override
    public Connection getConnection(String user, String password) throws SQLException {
      return observe(() -> source.getConnection(user, password));
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
      return source.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
      source.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
      source.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
      return source.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
      return source.getParentLogger();
    }

    @Override
    public <T> T unwrap(Class<T> type) throws SQLException {
      return type.isInstance(this) ? type.cast(this) : source.unwrap(type);
    }

    @Override
    public boolean isWrapperFor(Class<?> type) throws SQLException {
      return type.isInstance(this) || source.isWrapperFor(type);
    }
  }
}
