package dev.paddock.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Opening failures say what to do, and never echo URL parameters (they may hold a password). */
class StoreOpeningTest {
  @Test
  void unsupportedUrlIsRejectedWithTheSupportedOnes() {
    assertThatThrownBy(() -> SandboxStores.open("jdbc:mysql://db/paddock?password=secret", "", ""))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("jdbc:sqlite:")
        .hasMessageContaining("jdbc:postgresql:")
        .hasMessageNotContaining("secret");
  }

  @Test
  void unreachableDatabaseIsReportedWithoutItsParameters() {
    // Port 1 on loopback: nothing listens there.
    assertThatThrownBy(
            () ->
                SandboxStores.open(
                    "jdbc:postgresql://127.0.0.1:1/paddock?password=secret&connectTimeout=2",
                    "paddock",
                    ""))
        .isInstanceOf(StoreException.class)
        .hasMessageContaining("Could not open the store at jdbc:postgresql://127.0.0.1:1/paddock")
        .hasMessageContaining("check the URL")
        .hasMessageNotContaining("secret");
  }

  @Test
  void scriptsSplitIntoStatementsAtLineEndSemicolons() {
    assertThat(
            Migrations.statements(
                "-- comment; not a statement\nCREATE TABLE a (x TEXT);\n\nCREATE INDEX i\n"
                    + "  ON a (x);\n"))
        .containsExactly("CREATE TABLE a (x TEXT)", "CREATE INDEX i\n  ON a (x)");
  }
}
