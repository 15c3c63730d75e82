package dev.paddock.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.ArchiveStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The local-directory store keeps the archive store contract. */
class DirectoryArchiveStoreTest extends ArchiveStoreContract {
  @TempDir Path root;

  @Override
  protected ArchiveStore newStore() {
    return ArchiveStores.directory(root.resolve("archives"));
  }

  @Test
  void noPartialFileIsLeftBeside() throws Exception {
    Path file = Files.writeString(root.resolve("f"), "x");
    store().put("a/b.patch", file);
    try (var names = Files.list(root.resolve("archives/a"))) {
      assertThat(names.map(p -> p.getFileName().toString())).containsExactly("b.patch");
    }
  }

  @Test
  void theSettingsChooseTheDirectoryStoreByDefault() throws Exception {
    try (ArchiveStore chosen =
        ArchiveStores.fromSettings(Map.of("paddock.data-dir", root.toString()))) {
      chosen.put("a/b.patch", Files.writeString(root.resolve("g"), "y"));
    }
    assertThat(root.resolve("archives/a/b.patch")).hasContent("y");
  }
}
