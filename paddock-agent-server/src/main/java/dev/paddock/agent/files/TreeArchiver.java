package dev.paddock.agent.files;

import dev.paddock.http.Json;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.Channels;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFileAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Writes one directory tree as tar entries under {@code <root-name>/}: directories (empty ones
 * too), regular files and symbolic links (stored as links, never followed), in name order. Other
 * file types are left out, since reading a FIFO or a device could block or never end. The tree is
 * walked through open directory handles ({@link DirHandle}), so a directory swapped for a link
 * mid-walk is archived as that link, never followed out. For workspace archives ({@link
 * #forArchive}) excluded and {@linkplain CredentialScrub secret} entries are skipped, excluded
 * directories with all they hold, and last comes {@code <root-name>/archive_manifest.json} unless
 * the tree has its own; plain directory downloads ({@link #plain}) hold everything and no manifest.
 * Files that vanish mid-walk are skipped; unreadable ones are skipped and listed. Single use, not
 * thread-safe.
 */
final class TreeArchiver {
  static final String MANIFEST = "archive_manifest.json";

  private final DirHandle root;
  private final String rootName;
  private final ExcludeRules rules;
  private final boolean archive;
  private final TarEntryWriter tar;
  private final List<String> unreadable = new ArrayList<>();
  private long fileCount;
  private long totalBytes;
  private boolean userManifest;

  private TreeArchiver(DirHandle root, ExcludeRules rules, boolean archive, TarEntryWriter tar) {
    this.root = root;
    this.rootName = rootName(root.path());
    this.rules = rules;
    this.archive = archive;
    this.tar = tar;
  }

  /** A workspace archive: excludes, credential scrub and manifest. */
  static TreeArchiver forArchive(DirHandle root, ExcludeRules rules, TarEntryWriter tar) {
    return new TreeArchiver(root, rules, true, tar);
  }

  /** A plain directory download: every entry, no manifest. */
  static TreeArchiver plain(DirHandle root, TarEntryWriter tar) {
    return new TreeArchiver(root, ExcludeRules.of(List.of()), false, tar);
  }

  /** The top-level name inside the archive: the directory's own name ({@code root} for /). */
  static String rootName(Path dir) {
    return dir.getFileName() == null ? "root" : dir.getFileName().toString();
  }

  /** Writes the tree and the manifest; the caller finishes the archive. */
  void write() throws IOException {
    PosixFileAttributes attributes = root.attributes(Location.SELF);
    tar.directory(
        rootName, TarEntryWriter.permissionBits(attributes.permissions()), mtime(attributes));
    children(root, "");
    if (archive && !userManifest) {
      writeManifest();
    }
  }

  private void children(DirHandle dir, String relative) throws IOException {
    List<String> names;
    try {
      names = new ArrayList<>(dir.names());
    } catch (AccessDeniedException e) {
      unreadable.add(relative.isEmpty() ? "." : relative);
      return;
    }
    names.sort(Comparator.naturalOrder());
    for (String name : names) {
      visit(dir, name, relative.isEmpty() ? name : relative + "/" + name);
    }
  }

  private void visit(DirHandle dir, String entry, String relative) throws IOException {
    PosixFileAttributes attributes;
    try {
      attributes = dir.attributes(entry);
    } catch (NoSuchFileException e) {
      return;
    }
    if (archive
        && (CredentialScrub.isSecret(dir.path().resolve(entry))
            || rules.excludes(relative, attributes.isDirectory()))) {
      return;
    }
    userManifest |= relative.equals(MANIFEST);
    String name = rootName + "/" + relative;
    int permissions = TarEntryWriter.permissionBits(attributes.permissions());
    if (attributes.isDirectory()) {
      directory(dir, entry, relative, name, permissions, mtime(attributes));
    } else if (attributes.isSymbolicLink()) {
      tar.symlink(name, dir.readLink(entry), mtime(attributes));
    } else if (attributes.isRegularFile()) {
      file(dir, entry, relative, name, permissions, mtime(attributes));
    }
  }

  private void directory(
      DirHandle dir, String entry, String relative, String name, int permissions, FileTime modified)
      throws IOException {
    DirHandle child;
    try {
      child = dir.childHandle(entry);
    } catch (AccessDeniedException e) {
      unreadable.add(relative);
      return;
    } catch (FileSystemException e) {
      // Gone, or swapped for something else since it was seen: not part of the snapshot.
      return;
    }
    try (child) {
      tar.directory(name, permissions, modified);
      children(child, relative);
    }
  }

  private void file(
      DirHandle dir, String entry, String relative, String name, int permissions, FileTime modified)
      throws IOException {
    // NOFOLLOW_LINKS, relative to the open directory: a file swapped for a link is not followed.
    try (SeekableByteChannel channel =
            dir.stream()
                .newByteChannel(
                    Path.of(entry), Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS));
        InputStream content = Channels.newInputStream(channel)) {
      long size = channel.size();
      tar.file(name, permissions, modified, size, content);
      fileCount++;
      totalBytes += size;
    } catch (AccessDeniedException e) {
      unreadable.add(relative);
    } catch (NoSuchFileException e) {
      // Deleted since the directory was listed: it is simply not part of the snapshot.
    } catch (FileSystemException e) {
      // Swapped for a link since it was seen (ELOOP): never followed, left out.
    }
  }

  private void writeManifest() throws IOException {
    Map<String, Object> manifest = new LinkedHashMap<>();
    manifest.put("format", "tar.gz");
    manifest.put("source", root.path().toString());
    manifest.put("file_count", fileCount);
    manifest.put("total_bytes", totalBytes);
    manifest.put("excludes", rules.patterns());
    if (!unreadable.isEmpty()) {
      manifest.put("unreadable", unreadable);
    }
    byte[] json = Json.bytes(manifest);
    tar.file(
        rootName + "/" + MANIFEST,
        0644,
        FileTime.fromMillis(System.currentTimeMillis()),
        json.length,
        new ByteArrayInputStream(json));
  }

  private static FileTime mtime(PosixFileAttributes attributes) {
    return attributes.lastModifiedTime();
  }
}
