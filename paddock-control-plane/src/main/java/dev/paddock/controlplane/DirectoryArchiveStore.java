package dev.paddock.controlplane;

import dev.paddock.api.ArchiveStore;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/** {@link ArchiveStore} over a local directory; see {@link ArchiveStores#directory}. */
final class DirectoryArchiveStore implements ArchiveStore {
  private static final String TEMP_SUFFIX = ".partial";

  private final Path root;

  DirectoryArchiveStore(Path root) {
    this.root = root;
  }

  @Override
  public void put(String key, Path file) throws IOException {
    Path target = resolve(key);
    Files.createDirectories(target.getParent());
    // Copied beside the target, then renamed: a reader sees no object or the whole one.
    Path temp = Files.createTempFile(target.getParent(), ".put-", TEMP_SUFFIX);
    try {
      Files.copy(file, temp, StandardCopyOption.REPLACE_EXISTING);
      Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE);
    } finally {
      Files.deleteIfExists(temp);
    }
  }

  @Override
  public List<String> list(String prefix) throws IOException {
    if (!Files.isDirectory(root)) {
      return List.of();
    }
    try (Stream<Path> files = Files.walk(root)) {
      return files
          .filter(Files::isRegularFile)
          .map(p -> root.relativize(p).toString().replace(p.getFileSystem().getSeparator(), "/"))
          .filter(k -> k.startsWith(prefix) && !k.endsWith(TEMP_SUFFIX))
          .sorted()
          .toList();
    }
  }

  @Override
  public Optional<InputStream> open(String key) throws IOException {
    try {
      return Optional.of(Files.newInputStream(resolve(key)));
    } catch (NoSuchFileException e) {
      return Optional.empty();
    }
  }

  @Override
  public Optional<Long> size(String key) throws IOException {
    Path file = resolve(key);
    return Files.isRegularFile(file) ? Optional.of(Files.size(file)) : Optional.empty();
  }

  private Path resolve(String key) {
    return root.resolve(ArchiveStore.requireValidKey(key));
  }
}
