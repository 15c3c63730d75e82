package dev.paddock.store;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.util.DriverDataSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Clock;
import java.util.Objects;

/**
 * Opens a {@link SandboxStore}. The schema is created or upgraded before the store is returned; the
 * caller closes the store.
 */
public final class SandboxStores {
  /** The embedded database's file name under the data directory. */
  public static final String EMBEDDED_FILE = "paddock.db";

  private SandboxStores() {}

  /**
   * Opens the store at a JDBC URL: {@code jdbc:sqlite:/path/paddock.db} (embedded, one process) or
   * {@code jdbc:postgresql://host:port/database} (several control-plane replicas may share it).
   * {@code user} and {@code password} may be empty (SQLite ignores them).
   *
   * @throws IllegalArgumentException for another kind of URL
   * @throws StoreException when the database cannot be reached, migrated, or its schema is newer
   *     than this code
   */
  public static SandboxStore open(String jdbcUrl, String user, String password) {
    Objects.requireNonNull(jdbcUrl, "jdbcUrl");
    Objects.requireNonNull(user, "user");
    Objects.requireNonNull(password, "password");
    Dialect dialect = Dialect.of(jdbcUrl);
    Reachability reachability = new Reachability(Clock.systemUTC());
    Database database =
        new Database(pool(dialect, jdbcUrl, user, password, reachability), dialect, reachability);
    try {
      Migrations.forDialect(dialect).apply(database);
    } catch (RuntimeException e) {
      database.close();
      throw e;
    }
    return new JdbcSandboxStore(database, Clock.systemUTC());
  }

  /**
   * Opens (creating when needed) the embedded SQLite store {@value #EMBEDDED_FILE} in {@code
   * dataDir}.
   */
  public static SandboxStore openEmbedded(Path dataDir) {
    Path file = dataDir.resolve(EMBEDDED_FILE).toAbsolutePath();
    try {
      DataDirectory.create(dataDir);
      // SQLite gives its -wal and -shm files the database file's mode: private from the start.
      DataDirectory.createPrivateFile(file);
    } catch (IOException e) {
      throw new UncheckedIOException("Could not create the data directory " + dataDir, e);
    }
    return open("jdbc:sqlite:" + file, "", "");
  }

  private static HikariDataSource pool(
      Dialect dialect, String jdbcUrl, String user, String password, Reachability reachability) {
    HikariConfig config = new HikariConfig();
    config.setPoolName("paddock-store");
    config.setConnectionTimeout(10_000);
    dialect.configure(config, jdbcUrl);
    try {
      // The driver's data source as the pool would make it from the URL, watched so that a
      // database that cannot be reached is known at the first failed connect (Reachability).
      config.setDataSource(
          reachability.watch(
              new DriverDataSource(
                  jdbcUrl,
                  dialect.driverClassName(),
                  config.getDataSourceProperties(),
                  user.isEmpty() ? null : user,
                  password.isEmpty() ? null : password)));
      return new HikariDataSource(config);
    } catch (RuntimeException e) {
      throw new StoreException(
          "Could not open the store at "
              + Redaction.url(jdbcUrl)
              + ": "
              + rootMessage(e)
              + "; check the URL, user and password, and that the database is running",
          e);
    }
  }

  private static String rootMessage(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return String.valueOf(root.getMessage());
  }
}
