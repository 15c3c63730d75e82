package dev.paddock.store;

import com.zaxxer.hikari.HikariConfig;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.Set;
import org.sqlite.SQLiteErrorCode;
import org.sqlite.SQLiteException;

/**
 * What differs between SQLite and PostgreSQL: the pool, how a write conflict is reported, and how
 * concurrent writers are serialised where ordering matters. Everything else is shared SQL.
 */
enum Dialect {
  SQLITE("sqlite", "org.sqlite.JDBC") {
    @Override
    void configure(HikariConfig config, String jdbcUrl) {
      // One file, one writer at a time: a few connections read concurrently (WAL), every
      // transaction takes the write lock when it begins (IMMEDIATE) so a read-then-write never
      // fails half-way with SQLITE_BUSY, and a waiting writer retries for busy_timeout.
      boolean inMemory = jdbcUrl.contains(":memory:") || jdbcUrl.contains("mode=memory");
      config.setMaximumPoolSize(inMemory ? 1 : 4);
      config.setMaxLifetime(0);
      config.setIdleTimeout(0);
      config.addDataSourceProperty("journal_mode", "WAL");
      config.addDataSourceProperty("busy_timeout", "10000");
      config.addDataSourceProperty("foreign_keys", "true");
      // Switching a new file to WAL needs a moment of exclusive access: a process opening the same
      // file at that instant gets SQLITE_BUSY before any busy handler applies. Keep trying to get
      // the first connection for a while instead of failing the open (seen once in a full test run:
      // two stores opening one new file together, one failed with "database is locked").
      config.setInitializationFailTimeout(10_000);
      config.addDataSourceProperty("transaction_mode", "IMMEDIATE");
    }

    @Override
    boolean isConflict(SQLException e) {
      return e instanceof SQLiteException sqlite && CONFLICTS.contains(sqlite.getResultCode());
    }

    @Override
    void lockMigrations(Connection connection) {
      // IMMEDIATE transactions already hold the database's write lock.
    }

    @Override
    void lockConversation(Connection connection, String conversationId) {
      // IMMEDIATE transactions already hold the database's write lock.
    }
  },

  POSTGRESQL("postgresql", "org.postgresql.Driver") {
    @Override
    void configure(HikariConfig config, String jdbcUrl) {
      config.setMaximumPoolSize(8);
      // A fixed pool (minimum idle = maximum): after an outage it keeps reconnecting in the
      // background until it is full again, which is what lifts Reachability's fail-fast.
      config.setMinimumIdle(8);
      // A request waits at most 2 s for a connection (was 10 s): the requests already waiting when
      // the database goes away get their 503 that soon; later ones fail at once (Reachability).
      // Eight connections for statements of a few ms: a 2 s wait already means overload.
      config.setConnectionTimeout(2_000);
      config.setValidationTimeout(1_000);
      // A database host that stops answering (no refusal, no reset) would hold a statement for as
      // long as TCP takes to give up, minutes; the store's statements take milliseconds.
      config.addDataSourceProperty("socketTimeout", "30");
    }

    @Override
    boolean isConflict(SQLException e) {
      // 23505 unique_violation, 23503 foreign_key_violation
      return "23505".equals(e.getSQLState()) || "23503".equals(e.getSQLState());
    }

    @Override
    void lockMigrations(Connection connection) throws SQLException {
      // Held until the transaction ends; keyed by schema so separate schemas migrate in parallel.
      try (PreparedStatement lock =
          connection.prepareStatement(
              "SELECT pg_advisory_xact_lock(?, hashtext(current_schema()))")) {
        lock.setInt(1, MIGRATION_LOCK);
        lock.execute();
      }
    }

    @Override
    void lockConversation(Connection connection, String conversationId) throws SQLException {
      // Identity values are taken at insert but become visible at commit; two appends to one
      // conversation in flight could commit out of order, and a reader paging "after sequence N"
      // would skip the lower one. Serialising appends per conversation keeps sequence order equal
      // to commit order where readers look.
      try (PreparedStatement lock =
          connection.prepareStatement("SELECT pg_advisory_xact_lock(?, hashtext(?))")) {
        lock.setInt(1, EVENTS_LOCK);
        lock.setString(2, conversationId);
        lock.execute();
      }
    }
  };

  private static final Set<SQLiteErrorCode> CONFLICTS =
      Set.of(
          SQLiteErrorCode.SQLITE_CONSTRAINT_PRIMARYKEY,
          SQLiteErrorCode.SQLITE_CONSTRAINT_UNIQUE,
          SQLiteErrorCode.SQLITE_CONSTRAINT_FOREIGNKEY);

  /** First key of Paddock's advisory locks: "PDCK". */
  private static final int MIGRATION_LOCK = 0x5044434b;

  private static final int EVENTS_LOCK = MIGRATION_LOCK + 1;

  private final String scriptSuffix;
  private final String driverClassName;

  Dialect(String scriptSuffix, String driverClassName) {
    this.scriptSuffix = scriptSuffix;
    this.driverClassName = driverClassName;
  }

  /** The dialect a JDBC URL names. */
  static Dialect of(String jdbcUrl) {
    if (jdbcUrl.startsWith("jdbc:sqlite:")) {
      return SQLITE;
    }
    if (jdbcUrl.startsWith("jdbc:postgresql:")) {
      return POSTGRESQL;
    }
    throw new IllegalArgumentException(
        "Unsupported store URL '"
            + Redaction.url(jdbcUrl)
            + "': use jdbc:sqlite:<file> or jdbc:postgresql://<host>/<database>");
  }

  /** Migration scripts named {@code V<n>__<what>.<suffix>.sql} apply to this dialect only. */
  String scriptSuffix() {
    return scriptSuffix;
  }

  /** Named explicitly so that a shaded jar without merged service files still finds it. */
  String driverClassName() {
    return driverClassName;
  }

  abstract void configure(HikariConfig config, String jdbcUrl);

  /** A unique or foreign-key violation: the caller lost a race or reused a taken value. */
  abstract boolean isConflict(SQLException e);

  /** Within a transaction: blocks other replicas' migrations until it ends. */
  abstract void lockMigrations(Connection connection) throws SQLException;

  /** Within a transaction: blocks other appends to the same conversation until it ends. */
  abstract void lockConversation(Connection connection, String conversationId) throws SQLException;
}
