package dev.paddock.store;

import static org.assertj.core.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;

/**
 * A fresh, empty database for one test, removed by {@link #close()}: a SQLite file in a temporary
 * directory, or a new schema in the PostgreSQL database named by {@value #POSTGRES_URL}.
 *
 * @param url JDBC URL to open the store with
 * @param user database user ("" for SQLite)
 * @param password database password ("" for SQLite)
 * @param drop removes the database
 */
public record TestDatabase(String url, String user, String password, Runnable drop)
    implements AutoCloseable {
  /** Environment variable naming the PostgreSQL database the tests may create schemas in. */
  public static final String POSTGRES_URL = "PADDOCK_TEST_POSTGRES_URL";

  /** A SQLite file in a new temporary directory; closing deletes the directory. */
  public static TestDatabase sqlite() {
    try {
      Path dir = Files.createTempDirectory("paddock-store-");
      return new TestDatabase(
          "jdbc:sqlite:" + dir.resolve("paddock.db"), "", "", () -> deleteTree(dir));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /**
   * A new schema in the database {@value #POSTGRES_URL} names (user and password from {@code
   * PADDOCK_TEST_POSTGRES_USER} and {@code _PASSWORD}); closing drops it. Skips the test when the
   * variable is unset (see {@link #requirePostgres()}).
   */
  public static TestDatabase postgres() {
    String base = requirePostgres();
    String user = System.getenv().getOrDefault("PADDOCK_TEST_POSTGRES_USER", "");
    String password = System.getenv().getOrDefault("PADDOCK_TEST_POSTGRES_PASSWORD", "");
    String schema =
        "paddock_test_" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextLong());
    execute(base, user, password, "CREATE SCHEMA " + schema);
    String separator = base.contains("?") ? "&" : "?";
    return new TestDatabase(
        base + separator + "currentSchema=" + schema,
        user,
        password,
        () -> execute(base, user, password, "DROP SCHEMA " + schema + " CASCADE"));
  }

  /**
   * The PostgreSQL test database's URL. Skips the calling test (a JUnit assumption) when {@value
   * #POSTGRES_URL} is unset, and fails it instead on CI, where {@code .ci/run} sets it.
   */
  public static String requirePostgres() {
    String url = System.getenv(POSTGRES_URL);
    if (url == null && "true".equals(System.getenv("CI"))) {
      fail(POSTGRES_URL + " is unset on CI: .ci/run should have started PostgreSQL and set it");
    }
    assumeTrue(
        url != null,
        POSTGRES_URL
            + " is unset: PostgreSQL store tests skipped. Set it (and _USER, _PASSWORD), e.g. to"
            + " jdbc:postgresql://127.0.0.1:5432/paddock_test, as .ci/run does.");
    return url;
  }

  /** A connection outside the store, for what a test does behind its back. */
  public Connection connect() throws SQLException {
    return DriverManager.getConnection(url, user, password);
  }

  @Override
  public void close() {
    drop.run();
  }

  private static void execute(String url, String user, String password, String sql) {
    try (Connection connection = DriverManager.getConnection(url, user, password);
        Statement statement = connection.createStatement()) {
      statement.execute(sql);
    } catch (SQLException e) {
      throw new IllegalStateException("Could not run '" + sql + "' on " + url, e);
    }
  }

  private static void deleteTree(Path dir) {
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(path);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("Could not delete " + dir, e);
    }
  }
}
