package dev.paddock.agent.search;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * The directories a search walks and what it sees in each: entries in name order, links reported
 * but never followed (so a walk cannot leave the directory it was given), {@code .git} never
 * entered, hidden names left out unless asked, and with {@code gitignore} the entries the {@code
 * .gitignore} files (and {@code .git/info/exclude}) in force ignore left out, including those of
 * the directories above the top up to its repository's root. Immutable and thread-safe.
 */
final class SearchTree {
  /** One directory to read: where it is, its path from the top, and the ignore files in force. */
  record Dir(Path path, String relative, Ignores ignores) {}

  /** One entry: its path from the top ({@code /}-separated) and its attributes (not followed). */
  record Entry(Path path, String relative, BasicFileAttributes attributes) {
    boolean isDirectory() {
      return attributes.isDirectory();
    }
  }

  private final boolean hidden;
  private final boolean gitignore;
  private final String ignorePrefix;
  private final Predicate<Entry> prune;

  private SearchTree(
      boolean hidden, boolean gitignore, String ignorePrefix, Predicate<Entry> prune) {
    this.hidden = hidden;
    this.gitignore = gitignore;
    this.ignorePrefix = ignorePrefix;
    this.prune = prune;
  }

  /**
   * A walk from the directory {@code top}; {@code prune} drops directories (and their contents)
   * before they are read.
   */
  static Walk from(Path top, boolean hidden, boolean gitignore, Predicate<Entry> prune) {
    Ignores above = Ignores.NONE;
    String prefix = "";
    Optional<Path> repository = gitignore ? repositoryAbove(top) : Optional.empty();
    if (repository.isPresent() && !repository.get().equals(top)) {
      Path dir = repository.get();
      above = above.enter(dir, "", true);
      for (Path name : dir.relativize(top)) {
        dir = dir.resolve(name);
        prefix = prefix + name + "/";
        if (!dir.equals(top)) {
          above = above.enter(dir, prefix, false);
        }
      }
    }
    SearchTree tree = new SearchTree(hidden, gitignore, prefix, prune);
    Ignores atTop = gitignore ? above.enter(top, prefix, isRepository(top)) : Ignores.NONE;
    return new Walk(tree, new Dir(top, "", atTop));
  }

  /** A tree and the directory its walk starts at. */
  record Walk(SearchTree tree, Dir top) {}

  /** The nearest strict ancestor of {@code top} (or {@code top}) holding {@code .git}. */
  private static Optional<Path> repositoryAbove(Path top) {
    for (Path dir = top; dir != null; dir = dir.getParent()) {
      if (Files.exists(dir.resolve(".git"), LinkOption.NOFOLLOW_LINKS)) {
        return Optional.of(dir);
      }
    }
    return Optional.empty();
  }

  /** The entries of {@code dir} a search sees; an unreadable directory has none. */
  List<Entry> children(Dir dir) {
    List<Path> names = new ArrayList<>();
    try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir.path())) {
      for (Path child : stream) {
        names.add(child);
      }
    } catch (IOException | java.nio.file.DirectoryIteratorException e) {
      return List.of();
    }
    names.sort(null);
    List<Entry> entries = new ArrayList<>(names.size());
    for (Path child : names) {
      String name = child.getFileName().toString();
      if (name.equals(".git") || (!hidden && name.startsWith("."))) {
        continue;
      }
      BasicFileAttributes attributes;
      try {
        attributes =
            Files.readAttributes(child, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      } catch (IOException e) {
        continue; // Gone meanwhile.
      }
      Entry entry = new Entry(child, dir.relative() + name, attributes);
      if (gitignore
          && dir.ignores().ignores(ignorePrefix + entry.relative(), entry.isDirectory())) {
        continue;
      }
      if (entry.isDirectory() && prune.test(entry)) {
        continue;
      }
      entries.add(entry);
    }
    return entries;
  }

  /** The directory {@code entry} as the next one to read. */
  Dir enter(Dir parent, Entry entry) {
    String relative = entry.relative() + "/";
    Ignores ignores =
        gitignore
            ? parent
                .ignores()
                .enter(entry.path(), ignorePrefix + relative, isRepository(entry.path()))
            : parent.ignores();
    return new Dir(entry.path(), relative, ignores);
  }

  private static boolean isRepository(Path dir) {
    return Files.isDirectory(dir.resolve(".git"), LinkOption.NOFOLLOW_LINKS);
  }
}
