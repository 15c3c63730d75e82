package dev.paddock.hardening;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;

/** The checkout this module is built in: its modules' sources and its docs. */
final class SourceTree {
  private SourceTree() {}

  /** The reactor's root: the nearest directory above this module holding the parent POM. */
  static Path root() {
    Path dir = Path.of("").toAbsolutePath();
    while (dir != null
        && !(Files.isRegularFile(dir.resolve("mvnw")) && Files.isDirectory(dir.resolve("docs")))) {
      dir = dir.getParent();
    }
    if (dir == null) {
      throw new IllegalStateException(
          "not inside a Paddock checkout: " + Path.of("").toAbsolutePath());
    }
    return dir;
  }

  /** Every file under {@code root}'s modules' {@code src/<kind>/java}. */
  static List<Path> javaSources(String kind) {
    try (Stream<Path> modules = Files.list(root())) {
      return modules
          .filter(m -> m.getFileName().toString().startsWith("paddock-"))
          .map(m -> m.resolve("src").resolve(kind))
          .filter(Files::isDirectory)
          .flatMap(SourceTree::walk)
          .filter(f -> f.toString().endsWith(".java"))
          .sorted()
          .toList();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static Stream<Path> walk(Path dir) {
    try (Stream<Path> files = Files.walk(dir)) {
      return files.toList().stream();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
