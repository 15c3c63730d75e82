package dev.paddock.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.ArchiveStore;
import dev.paddock.api.Caller;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Archive names read back through the directory store, including ones no capture could write. */
class StoredArchivesTest {
  @TempDir Path root;

  @Test
  void anOverlongNameIsAbsentNotAStoreOutage() throws Exception {
    // Probe D11: past PATH_MAX the file system refused the lookup and the route answered 503.
    StoredArchives archives = new StoredArchives(Optional.of(ArchiveStores.directory(root)), "p");
    String longName = "a".repeat(5000);

    assertThat(archives.open(Caller.admin("root"), "sbx-1", "g/" + longName)).isEmpty();
    assertThat(archives.open(Caller.admin("root"), "sbx-1", longName + "/f")).isEmpty();
    assertThat(archives.list(Caller.admin("root"), longName)).isEmpty();
  }

  @Test
  void aNameAtTheLongestWrittenLengthIsStillServed() throws Exception {
    ArchiveStore store = ArchiveStores.directory(root);
    String longest = "b".repeat(128);
    Path body = Files.writeString(root.resolve("body"), "bytes");
    Path manifest =
        Files.writeString(
            root.resolve("manifest"),
            "{\"format\":\"tar.gz\",\"byte_count\":5,\"sha256\":\"00\","
                + "\"created_at\":\"2026-12-01T00:00:00Z\"}");
    store.put("p/sbx-1/" + longest + "/" + longest, body);
    store.put("p/sbx-1/" + longest + "/" + longest + WorkspaceArchiver.MANIFEST_SUFFIX, manifest);
    StoredArchives archives = new StoredArchives(Optional.of(store), "p");

    Optional<InputStream> opened =
        archives.open(Caller.admin("root"), "sbx-1", longest + "/" + longest);

    assertThat(opened).isPresent();
    try (InputStream in = opened.get()) {
      assertThat(new String(in.readAllBytes(), StandardCharsets.UTF_8)).isEqualTo("bytes");
    }
    assertThat(archives.list(Caller.admin("root"), "sbx-1")).hasSize(1);
  }
}
