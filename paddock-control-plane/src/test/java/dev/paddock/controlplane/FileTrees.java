package dev.paddock.controlplane;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Removal of a test's directories, deepest entry first, named after {@link Files#delete} and {@link
 * Files#deleteIfExists}. Test code only.
 */
public final class FileTrees {
  private FileTrees() {}

  /**
   * Removes {@code dir} and everything under it.
   *
   * @throws UncheckedIOException naming {@code dir} when it does not exist or an entry cannot be
   *     removed
   */
  public static void delete(Path dir) {
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot remove " + dir, e);
    }
  }

  /** As {@link #delete}, doing nothing when {@code dir} does not exist. */
  public static void deleteIfExists(Path dir) {
    if (Files.exists(dir)) {
      delete(dir);
    }
  }
}
