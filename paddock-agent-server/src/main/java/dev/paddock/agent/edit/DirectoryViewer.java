package dev.paddock.agent.edit;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code view} of a directory, as OpenHands prints it: the directory and its entries two levels
 * deep, sorted, hidden ones left out (and counted), directories ending in {@code /}. Links are
 * listed but never followed. Each directory read stops after {@link #MAX_ENTRIES_PER_DIRECTORY}
 * names and the whole text after {@code maxChars}, both saying so.
 */
final class DirectoryViewer {
  static final int MAX_ENTRIES_PER_DIRECTORY = 10_000;

  static final String TRUNCATED_NOTE =
      "<response clipped><NOTE>Due to the max output limit, only part of this directory has been"
          + " shown to you. You should use `ls -la` instead to view large directories"
          + " incrementally.</NOTE>";

  private DirectoryViewer() {}

  static Map<String, Object> view(Path dir, int maxChars) throws IOException {
    Listing top = list(dir);
    List<String> lines = new ArrayList<>();
    lines.add(dir + "/");
    boolean cut = top.cut();
    for (Path entry : top.visible()) {
      boolean isDirectory = Files.isDirectory(entry, LinkOption.NOFOLLOW_LINKS);
      lines.add(display(entry, isDirectory));
      if (isDirectory) {
        Listing inner = list(entry);
        cut |= inner.cut();
        for (Path child : inner.visible()) {
          lines.add(display(child, Files.isDirectory(child, LinkOption.NOFOLLOW_LINKS)));
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

  private record Listing(List<Path> visible, int hidden, boolean cut) {}

  /** The directory's visible entries in name order; an unreadable directory lists as empty. */
  private static Listing list(Path dir) {
    List<Path> visible = new ArrayList<>();
    int hidden = 0;
    int read = 0;
    try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
      for (Path entry : entries) {
        if (++read > MAX_ENTRIES_PER_DIRECTORY) {
          visible.sort(null);
          return new Listing(visible, hidden, true);
        }
        if (entry.getFileName().toString().startsWith(".")) {
          hidden++;
        } else {
          visible.add(entry);
        }
      }
    } catch (IOException e) {
      // Like OpenHands: a directory that cannot be read shows no children.
    }
    visible.sort(null);
    return new Listing(visible, hidden, false);
  }
}
