package dev.paddock.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The contract on SQLite, plus what only the embedded store does. */
class SqliteStoreTest extends SandboxStoreContract {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.sqlite();
  }

  @Override
  protected List<String> rejectEventSql(String poison) {
    return List.of(
        "CREATE TRIGGER reject_poison BEFORE INSERT ON webhook_events WHEN NEW.json = '"
            + poison
            + "' BEGIN SELECT RAISE(ABORT, 'poisoned event'); END");
  }

  @Test
  void databaseFileIsInWriteAheadLogMode() throws SQLException {
    try (Connection connection = database.connect();
        Statement statement = connection.createStatement();
        ResultSet row = statement.executeQuery("PRAGMA journal_mode")) {
      assertThat(row.next()).isTrue();
      assertThat(row.getString(1)).isEqualToIgnoringCase("wal");
    }
  }

  @Test
  void embeddedStoreCreatesItsFileInTheDataDirectory(@TempDir Path dataDir) {
    Path nested = dataDir.resolve("a/b");
    try (SandboxStore embedded = SandboxStores.openEmbedded(nested)) {
      embedded.insert(sandbox("sb-1", "alice", T0));
    }

    assertThat(nested.resolve(SandboxStores.EMBEDDED_FILE)).exists();
    try (SandboxStore reopened = SandboxStores.openEmbedded(nested)) {
      assertThat(reopened.find("sb-1")).isPresent();
    }
    assertThat(Files.exists(nested.resolve(SandboxStores.EMBEDDED_FILE))).isTrue();
  }
}
