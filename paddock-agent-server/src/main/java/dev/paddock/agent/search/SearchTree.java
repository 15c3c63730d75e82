package dev.paddock.agent.search;

import dev.paddock.agent.files.SafeFs;
import dev.paddock.http.HttpError;
import java.io.IOException;
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
 *
 * <p>Directories are read, and files opened, through {@link SafeFs}: each walk from a root opens
 * one component at a time without following links, and what it reaches is used only if no link was
 * followed on the way (the opened path is the one asked for). So code in the sandbox swapping a
 * directory for a link mid-search cannot make the search list or read anything through it, let
 * alone outside the roots. The {@code .gitignore} files are read by name (they only decide what is
 * left out, and are never shown).
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

  private final SafeFs fs;
  private final boolean hidden;
  private final boolean gitignore;
  private final String ignorePrefix;
  private final Predicate<Entry> prune;

  private SearchTree(
      SafeFs fs, boolean hidden, boolean gitignore, String ignorePrefix, Predicate<Entry> prune) {
    this.fs = fs;
    this.hidden = hidden;
    this.gitignore = gitignore;
    this.ignorePrefix = ignorePrefix;
    this.prune = prune;
  }

  /**
   * A walk from the directory {@code top} (a real path, as {@link SafeFs#realPath} gives); {@code
   * prune} drops directories (and their contents) before they are read.
   */
  static Walk from(SafeFs fs, Path top, boolean hidden, boolean gitignore, Predicate<Entry> prune) {
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
    SearchTree tree = new SearchTree(fs, hidden, gitignore, prefix, prune);
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
    Optional<SafeFs.Directory> opened = openDirectory(dir);
    if (opened.isEmpty()) {
      return List.of();
    }
    try (SafeFs.Directory open = opened.get()) {
      return children(dir, open);
    } catch (IOException | HttpError e) {
      return List.of();
    }
  }

  /**
   * {@code dir} opened, if it is reached without following a link; empty when it is gone,
   * unreadable, or a link was swapped in on the way. The caller closes it.
   */
  Optional<SafeFs.Directory> openDirectory(Dir dir) {
    SafeFs.Directory opened;
    try {
      opened = fs.directory(dir.path().toString());
    } catch (IOException | HttpError e) {
      return Optional.empty();
    }
    if (opened.path().equals(dir.path())) {
      return Optional.of(opened);
    }
    closeQuietly(opened); // A link was swapped in on the way: not followed.
    return Optional.empty();
  }

  /**
   * The entries of {@code dir}, read through {@code opened} (which {@link #openDirectory} gave).
   */
  List<Entry> children(Dir dir, SafeFs.Directory opened) throws IOException {
    List<String> names = new ArrayList<>(opened.names());
    names.sort(null);
    List<Entry> entries = new ArrayList<>(names.size());
    for (String name : names) {
      if (name.equals(".git") || (!hidden && name.startsWith("."))) {
        continue;
      }
      BasicFileAttributes attributes;
      try {
        attributes = opened.attributes(name);
      } catch (IOException e) {
        continue; // Gone meanwhile.
      }
      Entry entry = new Entry(dir.path().resolve(name), dir.relative() + name, attributes);
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

  /**
   * The regular file {@code file} opened for reading, if it is reached without following a link;
   * empty when it is gone, unreadable, or a link was swapped in on the way. The caller closes it.
   */
  Optional<SafeFs.OpenFile> open(Path file) {
    SafeFs.OpenFile opened;
    try {
      opened = fs.open(file.toString());
    } catch (IOException | HttpError e) {
      return Optional.empty();
    }
    if (opened.entry().path().equals(file)) {
      return Optional.of(opened);
    }
    closeQuietly(opened);
    return Optional.empty();
  }

  /**
   * The regular file {@code entry} of the directory {@code opened}, opened relative to that
   * descriptor without following a link (no walk from the root per file); empty when it is gone,
   * unreadable, or no longer a regular file. The caller closes it.
   */
  Optional<SafeFs.OpenFile> open(SafeFs.Directory opened, Entry entry) {
    try {
      return Optional.of(opened.open(entry.path().getFileName().toString()));
    } catch (IOException | HttpError e) {
      return Optional.empty();
    }
  }

  private static void closeQuietly(AutoCloseable opened) {
    try {
      opened.close();
    } catch (Exception e) {
      // Nothing was read through it.
    }
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
