package dev.paddock.client;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.EnumSet;
import java.util.Set;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;

/**
 * Local files as tar streams and back, for copying trees to and from a sandbox's {@code
 * upload_tar}/{@code download_tar} routes: directories, regular files and symbolic links (stored as
 * links, never followed), with permission bits and modification times. FIFOs, sockets and devices
 * are skipped, as the agent skips them.
 */
final class LocalTrees {
  private static final int TYPE_FILE = 0100000;
  private static final int TYPE_DIRECTORY = 040000;
  private static final int TYPE_SYMLINK = 0120000;

  private LocalTrees() {}

  /**
   * Writes {@code source} (a file, a link or a directory and everything under it) as entries named
   * {@code name}, {@code name/...}; with an empty {@code name}, a directory's entries are written
   * without a prefix (its contents).
   */
  static void write(Path source, String name, OutputStream out) throws IOException {
    TarArchiveOutputStream tar = new TarArchiveOutputStream(out, StandardCharsets.UTF_8.name());
    tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
    tar.setBigNumberMode(TarArchiveOutputStream.BIGNUMBER_POSIX);
    tar.setAddPaxHeadersForNonAsciiNames(true);
    Files.walkFileTree(source, new Writer(source, name, tar));
    tar.finish();
  }

  /** Adds each visited path as an entry; links are visited as links (the walk does not follow). */
  private static final class Writer extends SimpleFileVisitor<Path> {
    private final Path source;
    private final String name;
    private final TarArchiveOutputStream tar;

    Writer(Path source, String name, TarArchiveOutputStream tar) {
      this.source = source;
      this.name = name;
      this.tar = tar;
    }

    private String entryName(Path path) {
      String relative = source.relativize(path).toString();
      if (name.isEmpty()) {
        return relative;
      }
      return relative.isEmpty() ? name : name + "/" + relative;
    }

    @Override
    public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs)
        throws IOException {
      String entryName = entryName(dir);
      if (!entryName.isEmpty()) {
        TarArchiveEntry entry = new TarArchiveEntry(entryName + "/");
        entry.setMode(TYPE_DIRECTORY | mode(dir));
        entry.setModTime(attrs.lastModifiedTime());
        put(entry);
      }
      return FileVisitResult.CONTINUE;
    }

    @Override
    public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
      if (attrs.isSymbolicLink()) {
        TarArchiveEntry entry = new TarArchiveEntry(entryName(file), TarConstants.LF_SYMLINK);
        entry.setLinkName(Files.readSymbolicLink(file).toString());
        entry.setMode(TYPE_SYMLINK | 0777);
        entry.setModTime(attrs.lastModifiedTime());
        put(entry);
      } else if (attrs.isRegularFile()) {
        TarArchiveEntry entry = new TarArchiveEntry(entryName(file));
        entry.setMode(TYPE_FILE | mode(file));
        entry.setModTime(attrs.lastModifiedTime());
        entry.setSize(attrs.size());
        tar.putArchiveEntry(entry);
        try (InputStream in = Files.newInputStream(file, LinkOption.NOFOLLOW_LINKS)) {
          in.transferTo(tar);
        }
        tar.closeArchiveEntry();
      }
      return FileVisitResult.CONTINUE;
    }

    @Override
    public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
      throw e;
    }

    private void put(TarArchiveEntry entry) throws IOException {
      tar.putArchiveEntry(entry);
      tar.closeArchiveEntry();
    }
  }

  /**
   * Extracts a tar whose entries all start with one top directory ({@code download_tar}'s {@code
   * <name>/}) into {@code target}, the top directory becoming {@code target} itself (created).
   * Directory modes are applied last so a read-only directory still receives its entries. An entry
   * climbing out ({@code ..}, an absolute name) or passing through a link is refused.
   */
  static int extractStrippingTop(InputStream in, Path target) throws IOException {
    Files.createDirectories(target);
    Deque<Runnable> directoryModes = new ArrayDeque<>();
    int entries = 0;
    TarArchiveInputStream tar = new TarArchiveInputStream(in, StandardCharsets.UTF_8.name());
    TarArchiveEntry entry;
    while ((entry = tar.getNextEntry()) != null) {
      String relative = stripTop(entry.getName());
      Path path = inside(target, relative);
      entries++;
      if (entry.isDirectory()) {
        Files.createDirectories(path);
        int mode = entry.getMode();
        FileTime time = entry.getLastModifiedTime();
        directoryModes.push(() -> finish(path, mode, time));
      } else if (entry.isSymbolicLink()) {
        Files.deleteIfExists(path);
        Files.createSymbolicLink(path, Path.of(entry.getLinkName()));
      } else if (entry.isFile()) {
        Files.copy(tar, path, StandardCopyOption.REPLACE_EXISTING);
        finish(path, entry.getMode(), entry.getLastModifiedTime());
      } else {
        entries--;
      }
    }
    directoryModes.forEach(Runnable::run);
    return entries;
  }

  private static String stripTop(String name) {
    String n = name.endsWith("/") ? name.substring(0, name.length() - 1) : name;
    int slash = n.indexOf('/');
    return slash < 0 ? "" : n.substring(slash + 1);
  }

  /** {@code relative} under {@code target}, refusing names that leave it or pass through a link. */
  private static Path inside(Path target, String relative) throws IOException {
    Path path = target;
    for (String part : relative.split("/")) {
      if (part.isEmpty() || part.equals(".")) {
        continue;
      }
      if (part.equals("..")) {
        throw new IOException("refusing tar entry '" + relative + "': it would leave " + target);
      }
      if (!path.equals(target) && Files.isSymbolicLink(path)) {
        throw new IOException(
            "refusing tar entry '" + relative + "': it passes through the link " + path);
      }
      path = path.resolve(part);
    }
    return path;
  }

  private static void finish(Path path, int mode, FileTime modified) {
    try {
      Files.setPosixFilePermissions(path, permissions(mode));
      Files.setLastModifiedTime(path, modified);
    } catch (IOException | UnsupportedOperationException e) {
      throw new PaddockClientException("cannot set the mode of " + path + ": " + e, e);
    }
  }

  /** The permission bits (rwx for user, group, others) of a path, not following a final link. */
  static int mode(Path path) throws IOException {
    Set<PosixFilePermission> perms = Files.getPosixFilePermissions(path, LinkOption.NOFOLLOW_LINKS);
    int mode = 0;
    for (PosixFilePermission p : perms) {
      mode |= 1 << (8 - p.ordinal());
    }
    return mode;
  }

  /** The permissions of {@code mode}'s low nine bits. */
  static Set<PosixFilePermission> permissions(int mode) {
    Set<PosixFilePermission> perms = EnumSet.noneOf(PosixFilePermission.class);
    for (PosixFilePermission p : PosixFilePermission.values()) {
      if ((mode & (1 << (8 - p.ordinal()))) != 0) {
        perms.add(p);
      }
    }
    return perms;
  }
}
