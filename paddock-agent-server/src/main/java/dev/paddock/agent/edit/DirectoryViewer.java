package dev.paddock.agent.edit;

import dev.paddock.agent.files.SafeFs;
import dev.paddock.http.HttpError;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code view} of a directory, as OpenHands prints it: the directory and its entries two levels
 * deep, sorted, hidden ones left out (and counted), directories ending in {@code /}, read through
 * descriptors opened by {@link SafeFs} (never by path). Links are listed but never followed. Each
 * directory read stops after {@link #MAX_ENTRIES_PER_DIRECTORY} names and the whole text after
 * {@code maxChars}, both saying so.
 */
final class DirectoryViewer {
  static final int MAX_ENTRIES_PER_DIRECTORY = 10_000;

  static final String TRUNCATED_NOTE =
      "<response clipped><NOTE>Due to the max output limit, only part of this directory has been"
          + " shown to you. You should use `ls -la` instead to view large directories"
          + " incrementally.</NOTE>";

  private DirectoryViewer() {}

  /** The reply for the open directory {@code opened}, whose subdirectories open relative to it. */
  static Map<String, Object> view(SafeFs.Directory opened, int maxChars) throws IOException {
    Path dir = opened.path();
    Listing top = list(opened);
    List<String> lines = new ArrayList<>();
    lines.add(dir + "/");
    boolean cut = top.cut();
    for (String name : top.visible()) {
      boolean isDirectory = isDirectory(opened, name);
      lines.add(display(dir.resolve(name), isDirectory));
      if (isDirectory) {
        Listing inner = listChild(opened, name);
        cut |= inner.cut();
        for (String child : inner.visible()) {
          Path shown = dir.resolve(name).resolve(child);
          lines.add(display(shown, inner.directories().contains(child)));
        }
      }
    }
    StringBuilder text =
        new StringBuilder("Here's the files and directories up to 2 levels deep in ")
            .append(dir)
            .append(", excluding hidden items:\n")
            .append(String.join("\n", lines));
    if (top.hidden() > 0) {
      text.append("\n\n")
          .append(top.hidden())
          .append(" hidden files/directories in this directory are excluded. You can use 'ls -la ")
          .append(dir)
          .append("' to see them.");
    }
    if (cut) {
      text.append("\nNOTE: a directory has more than ")
          .append(MAX_ENTRIES_PER_DIRECTORY)
          .append(" entries; only the first ones read are shown.");
    }
    boolean truncated = text.length() > maxChars;
    String output = truncated ? text.substring(0, maxChars) + TRUNCATED_NOTE : text.toString();
    Map<String, Object> reply = new LinkedHashMap<>();
    reply.put("command", "view");
    reply.put("path", dir.toString());
    reply.put("kind", "directory");
    reply.put("output", output);
    reply.put("entries", lines.size() - 1);
    reply.put("hidden", top.hidden());
    reply.put("truncated", truncated || cut);
    return reply;
  }

  private static String display(Path entry, boolean isDirectory) {
    return entry + (isDirectory ? "/" : "");
  }

  private static boolean isDirectory(SafeFs.Directory dir, String name) throws IOException {
    return dir.entry(name).map(e -> e.type() == SafeFs.FileType.DIRECTORY).orElse(false);
  }

  /** Visible names, and which of them are directories (links are not). */
  private record Listing(List<String> visible, Set<String> directories, int hidden, boolean cut) {
    static final Listing EMPTY = new Listing(List.of(), Set.of(), 0, false);
  }

  /**
   * The subdirectory {@code name} of {@code dir}, opened without following a link (one swapped in
   * meanwhile lists as empty).
   */
  private static Listing listChild(SafeFs.Directory dir, String name) {
    try (SafeFs.Directory child = dir.directory(name)) {
      Listing listing = list(child);
      Set<String> directories = new HashSet<>();
      for (String entry : listing.visible()) {
        if (isDirectory(child, entry)) {
          directories.add(entry);
        }
      }
      return new Listing(listing.visible(), directories, listing.hidden(), listing.cut());
    } catch (IOException | HttpError e) {
      // Like OpenHands: a directory that cannot be read shows no children.
      return Listing.EMPTY;
    }
  }

  /** The directory's visible entries in name order; an unreadable directory lists as empty. */
  private static Listing list(SafeFs.Directory dir) {
    List<String> names;
    try {
      names = dir.names();
    } catch (IOException e) {
      return Listing.EMPTY;
    }
    List<String> visible = new ArrayList<>();
    int hidden = 0;
    int read = 0;
    boolean cut = false;
    for (String name : names) {
      if (++read > MAX_ENTRIES_PER_DIRECTORY) {
        cut = true;
        break;
      }
      if (name.startsWith(".")) {
        hidden++;
      } else {
        visible.add(name);
      }
    }
    visible.sort(null);
    return new Listing(visible, Set.of(), hidden, cut);
  }
}
