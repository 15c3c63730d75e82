package dev.paddock.agent.files;

import dev.paddock.http.Json;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
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

/**
 * Writes one directory tree as tar entries under {@code <root-name>/}: directories (empty ones
 * too), regular files and symbolic links (stored as links, never followed), in name order. Other
 * file types are left out, since reading a FIFO or a device could block or never end. Excluded and
 * {@linkplain CredentialScrub secret} entries are skipped, excluded directories with all they hold.
 * Files that vanish mid-walk are skipped; unreadable ones are skipped and listed. Last comes {@code
 * <root-name>/archive_manifest.json} unless the tree has its own. Single use, not thread-safe.
 */
final class TreeArchiver {
  static final String MANIFEST = "archive_manifest.json";

  private final Path root;
  private final String rootName;
  private final ExcludeRules rules;
  private final TarEntryWriter tar;
  private final List<String> unreadable = new ArrayList<>();
  private long fileCount;
  private long totalBytes;
  private boolean userManifest;

  TreeArchiver(Path root, ExcludeRules rules, TarEntryWriter tar) {
    this.root = root;
    this.rootName = rootName(root);
    this.rules = rules;
    this.tar = tar;
  }

  /** The top-level name inside the archive: the directory's own name ({@code root} for /). */
  static String rootName(Path dir) {
    return dir.getFileName() == null ? "root" : dir.getFileName().toString();
  }

  /** Writes the tree and the manifest; the caller finishes the archive. */
  void write() throws IOException {
    PosixFileAttributes attributes = attributes(root);
    tar.directory(
        rootName, TarEntryWriter.permissionBits(attributes.permissions()), mtime(attributes));
    children(root, "");
    if (!userManifest) {
      writeManifest();
    }
  }

  private void children(Path dir, String relative) throws IOException {
    List<Path> entries = new ArrayList<>();
    try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir)) {
      stream.forEach(entries::add);
    } catch (AccessDeniedException e) {
      unreadable.add(relative.isEmpty() ? "." : relative);
      return;
    } catch (NoSuchFileException e) {
      return;
    }
    entries.sort(Comparator.comparing(p -> p.getFileName().toString()));
    for (Path entry : entries) {
      String name = entry.getFileName().toString();
      visit(entry, relative.isEmpty() ? name : relative + "/" + name);
    }
  }

  private void visit(Path path, String relative) throws IOException {
    PosixFileAttributes attributes;
    try {
      attributes = attributes(path);
    } catch (NoSuchFileException e) {
      return;
    }
    if (CredentialScrub.isSecret(path) || rules.excludes(relative, attributes.isDirectory())) {
      return;
    }
    userManifest |= relative.equals(MANIFEST);
    String name = rootName + "/" + relative;
    int permissions = TarEntryWriter.permissionBits(attributes.permissions());
    if (attributes.isDirectory()) {
      tar.directory(name, permissions, mtime(attributes));
      children(path, relative);
    } else if (attributes.isSymbolicLink()) {
      tar.symlink(name, Files.readSymbolicLink(path).toString(), mtime(attributes));
    } else if (attributes.isRegularFile()) {
      file(path, relative, name, permissions, mtime(attributes));
    }
  }

  private void file(Path path, String relative, String name, int permissions, FileTime modified)
      throws IOException {
    // NOFOLLOW_LINKS: a file swapped for a link since the walk saw it is not followed out.
    try (FileChannel channel =
            FileChannel.open(path, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
        InputStream content = Channels.newInputStream(channel)) {
      long size = channel.size();
      tar.file(name, permissions, modified, size, content);
      fileCount++;
      totalBytes += size;
    } catch (AccessDeniedException e) {
      unreadable.add(relative);
    } catch (NoSuchFileException e) {
      // Deleted since the directory was listed: it is simply not part of the snapshot.
    }
  }

  private void writeManifest() throws IOException {
    Map<String, Object> manifest = new LinkedHashMap<>();
    manifest.put("format", "tar.gz");
    manifest.put("source", root.toString());
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

  private static PosixFileAttributes attributes(Path path) throws IOException {
    return Files.readAttributes(path, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
  }

  private static FileTime mtime(PosixFileAttributes attributes) {
    return attributes.lastModifiedTime();
  }
}
