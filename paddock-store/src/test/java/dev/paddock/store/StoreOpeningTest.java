package dev.paddock.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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
  void theEmbeddedStoreAndItsDirectoryArePrivateToTheServersUser(@TempDir Path temp)
      throws Exception {
    // Probe D16: paddock.db was 0644 and the data directory 0755.
    Path data = temp.resolve("data/nested");
    try (SandboxStore store = SandboxStores.openEmbedded(data)) {
      assertThat(store.users()).isEmpty();
    }

    assertThat(mode(data)).isEqualTo("rwx------");
    assertThat(mode(data.getParent())).isEqualTo("rwx------");
    List<Path> files;
    try (Stream<Path> listed = Files.list(data)) {
      files = listed.toList();
    }
    assertThat(files).contains(data.resolve(SandboxStores.EMBEDDED_FILE));
    assertThat(files).allSatisfy(f -> assertThat(mode(f)).as(f.toString()).isEqualTo("rw-------"));
  }

  private static String mode(Path path) {
    try {
      return PosixFilePermissions.toString(Files.getPosixFilePermissions(path));
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
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
