package dev.paddock.store;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Brings a database's schema up to the version this code expects, one script per transaction,
 * recording each in {@code schema_version}. Scripts live under {@code db/migration/}, listed in
 * order in {@code index.txt} as {@code V<n>__<what>}; {@code V<n>__<what>.<dialect>.sql} is taken
 * when present, else {@code V<n>__<what>.sql}. On PostgreSQL each transaction holds an advisory
 * lock, so replicas starting together migrate once. A database newer than the code is refused.
 */
final class Migrations {
  private static final String ROOT = "db/migration/";
  private static final Pattern NAME = Pattern.compile("V(\\d+)__([a-z0-9_]+)");

  /** One script: its version, description and SQL statements. */
  record Script(int version, String description, List<String> statements) {}

  private final Dialect dialect;
  private final List<Script> scripts;

  private Migrations(Dialect dialect, List<Script> scripts) {
    this.dialect = dialect;
    this.scripts = List.copyOf(scripts);
  }

  /** The scripts for a dialect, read from the class path. */
  static Migrations forDialect(Dialect dialect) {
    List<Script> scripts = new ArrayList<>();
    for (String name : resource(ROOT + "index.txt").orElseThrow().lines().toList()) {
      if (name.isBlank() || name.startsWith("#")) {
        continue;
      }
      scripts.add(script(name.strip(), scripts.size() + 1, dialect));
    }
    return new Migrations(dialect, scripts);
  }

  /** The version the code expects. */
  int latest() {
    return scripts.size();
  }

  /** Applies every missing script; returns the schema version now in place. */
  int apply(Database database) {
    int current;
    do {
      current = database.transaction("migrate the schema", this::applyNext);
    } while (current < latest());
    return current;
  }

  /** In one transaction: applies the next missing script, if any; returns the version reached. */
  private int applyNext(Connection connection) throws SQLException {
    dialect.lockMigrations(connection);
    try (Statement statement = connection.createStatement()) {
      statement.execute(
          "CREATE TABLE IF NOT EXISTS schema_version (version INTEGER PRIMARY KEY,"
              + " description TEXT NOT NULL, applied_at BIGINT NOT NULL)");
    }
    int current = currentVersion(connection);
    if (current > latest()) {
      throw new StoreException(
          "The database's schema is version "
              + current
              + " but this Paddock knows versions up to "
              + latest()
              + ": it was upgraded by a newer Paddock. Run that version, or point this one at"
              + " another database.");
    }
    if (current == latest()) {
      return current;
    }
    Script next = scripts.get(current);
    run(connection, next);
    return next.version();
  }

  private static int currentVersion(Connection connection) throws SQLException {
    try (PreparedStatement query =
        connection.prepareStatement("SELECT MAX(version) FROM schema_version")) {
      return Database.first(query, row -> row.getInt(1)).orElse(0);
    }
  }

  private static void run(Connection connection, Script script) throws SQLException {
    try (Statement statement = connection.createStatement()) {
      for (String sql : script.statements()) {
        statement.execute(sql);
      }
    }
    try (PreparedStatement record =
        connection.prepareStatement(
            "INSERT INTO schema_version (version, description, applied_at) VALUES (?, ?, ?)")) {
      record.setInt(1, script.version());
      record.setString(2, script.description());
      record.setLong(3, System.currentTimeMillis());
      record.executeUpdate();
    }
  }

  private static Script script(String name, int expectedVersion, Dialect dialect) {
    Matcher matcher = NAME.matcher(name);
    if (!matcher.matches() || Integer.parseInt(matcher.group(1)) != expectedVersion) {
      throw new IllegalStateException(
          "Migration index entry '" + name + "' should be V" + expectedVersion + "__<what>");
    }
    String sql =
        resource(ROOT + name + "." + dialect.scriptSuffix() + ".sql")
            .or(() -> resource(ROOT + name + ".sql"))
            .orElseThrow(() -> new IllegalStateException("Migration script " + name + " missing"));
    return new Script(expectedVersion, matcher.group(2), statements(sql));
  }

  /**
   * Splits a script into statements: a statement ends with ';' at the end of a line; lines starting
   * with "--" are comments. Scripts are ours, so nothing fancier (no ';' inside literals at a line
   * end, no procedural blocks).
   */
  static List<String> statements(String sql) {
    List<String> statements = new ArrayList<>();
    StringBuilder current = new StringBuilder();
    for (String line : sql.lines().toList()) {
      String trimmed = line.strip();
      if (trimmed.isEmpty() || trimmed.startsWith("--")) {
        continue;
      }
      current.append(line).append('\n');
      if (trimmed.endsWith(";")) {
        String statement = current.toString().strip();
        statements.add(statement.substring(0, statement.length() - 1));
        current.setLength(0);
      }
    }
    if (!current.toString().isBlank()) {
      throw new IllegalStateException("Migration script ends without ';': " + current);
    }
    return statements;
  }

  private static Optional<String> resource(String path) {
    try (InputStream in = Migrations.class.getClassLoader().getResourceAsStream(path)) {
      return in == null
          ? Optional.empty()
          : Optional.of(new String(in.readAllBytes(), StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException("Could not read " + path + " from the class path", e);
    }
  }
}
