package dev.paddock.agent.files;

import dev.paddock.agent.files.SafeFs.FileEntry;
import dev.paddock.agent.files.SafeFs.FileType;
import dev.paddock.agent.files.SafeFs.OpenFile;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.Channels;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * A directory listing, depth first in name order, through open directory handles (links are listed,
 * never descended into). Hidden entries (names starting with {@code .}) are left out unless asked
 * for; with {@code gitignore} the {@code .gitignore} files of the listed directory and of every
 * directory below it apply (at their own level, as git reads them, with {@link ExcludeRules}
 * meaning: negation is not supported) and {@code .git} is left out. Stops after {@code limit}
 * entries with {@link Result#truncated()} set. Single use.
 */
final class Listing {
  static final int MAX_DEPTH = 20;
  static final int MAX_LIMIT = 100_000;
  private static final int MAX_GITIGNORE_BYTES = 256 * 1024;

  record Options(int depth, boolean hidden, boolean gitignore, int limit) {}

  record Result(List<Listed> entries, boolean truncated) {}

  /** An entry and its depth below the listed directory (1 = a direct child). */
  record Listed(FileEntry entry, int depth) {}

  private record Ignore(String base, ExcludeRules rules) {}

  private final Options options;
  private final List<Listed> entries = new ArrayList<>();
  private boolean truncated;

  private Listing(Options options) {
    this.options = options;
  }

  static Result of(DirHandle dir, Options options) throws IOException {
    Listing listing = new Listing(options);
    listing.list(dir, "", 1, new ArrayList<>());
    return new Result(List.copyOf(listing.entries), listing.truncated);
  }

  private void list(DirHandle dir, String relative, int depth, List<Ignore> ignores)
      throws IOException {
    List<Ignore> here = ignores;
    if (options.gitignore()) {
      here = new ArrayList<>(ignores);
      gitignore(dir, relative).ifPresent(here::add);
    }
    List<String> names = new ArrayList<>(dir.names());
    names.sort(Comparator.naturalOrder());
    for (String name : names) {
      if (truncated) {
        return;
      }
      if (!options.hidden() && name.startsWith(".")) {
        continue;
      }
      Optional<FileEntry> entry = dir.entry(name);
      if (entry.isEmpty()) {
        continue;
      }
      String path = relative.isEmpty() ? name : relative + "/" + name;
      boolean isDir = entry.get().type() == FileType.DIRECTORY;
      if (options.gitignore() && (name.equals(".git") || ignored(here, path, isDir))) {
        continue;
      }
      if (entries.size() >= options.limit()) {
        truncated = true;
        return;
      }
      entries.add(new Listed(entry.get(), depth));
      if (isDir && depth < options.depth()) {
        descend(dir, name, path, depth, here);
      }
    }
  }

  private void descend(DirHandle dir, String name, String path, int depth, List<Ignore> ignores)
      throws IOException {
    DirHandle child;
    try {
      child = dir.childHandle(name);
    } catch (IOException e) {
      // Unreadable, gone, or swapped for a link since it was seen: listed, not descended into.
      return;
    }
    try (child) {
      list(child, path, depth + 1, ignores);
    }
  }

  private static boolean ignored(List<Ignore> ignores, String path, boolean isDir) {
    for (Ignore ignore : ignores) {
      if (ignore.base().isEmpty()) {
        if (ignore.rules().excludes(path, isDir)) {
          return true;
        }
      } else if (path.startsWith(ignore.base() + "/")
          && ignore.rules().excludes(path.substring(ignore.base().length() + 1), isDir)) {
        return true;
      }
    }
    return false;
  }

  private static Optional<Ignore> gitignore(DirHandle dir, String relative) throws IOException {
    Optional<FileEntry> file = dir.entry(".gitignore");
    if (file.isEmpty() || file.get().type() != FileType.FILE) {
      return Optional.empty();
    }
    String text;
    try (OpenFile open = dir.open(".gitignore");
        InputStream in = Channels.newInputStream(open.channel())) {
      text = new String(in.readNBytes(MAX_GITIGNORE_BYTES), StandardCharsets.UTF_8);
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
    List<String> patterns = new ArrayList<>();
    for (String line : text.split("\n")) {
      String pattern = line.strip();
      if (!pattern.isEmpty() && !pattern.startsWith("#") && !pattern.startsWith("!")) {
        patterns.add(pattern);
      }
    }
    return Optional.of(new Ignore(relative, ExcludeRules.of(patterns)));
  }
}
