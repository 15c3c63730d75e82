package dev.paddock.agent.files;

import dev.paddock.agent.files.SafeFs.FileType;
import dev.paddock.agent.user.CommandUser;
import dev.paddock.http.HttpError;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.zip.GZIPInputStream;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveInputStream;

/**
 * Extracts a tar stream (plain or gzip, told by its first bytes) under an open target directory,
 * through directory handles only: entries are written as {@linkplain StagedFile staged files}, so a
 * truncated or malformed body never leaves a half-written file. Kept: directories, regular files,
 * symbolic links, permission bits (not set-id or sticky bits) and modification times; existing
 * files are replaced, existing directories merged. Refused with a 400 at the offending entry: names
 * that are absolute or climb out of the target with {@code ..}, entries that would pass through a
 * link, links whose target leaves the allowed roots, hard links, more than {@link #MAX_ENTRIES}
 * entries or {@link #MAX_BYTES} bytes of content. Devices and FIFOs are skipped. Entries before a
 * refused one stay extracted. Single use, not thread-safe.
 */
final class TarExtractor {
  static final int MAX_ENTRIES = 200_000;
  static final long MAX_BYTES = 64L << 30;

  private record DirMode(List<String> names, int mode, FileTime modified) {}

  private final SecureFs fs;
  private final CommandUser user;
  private final DirHandle target;
  private final List<DirMode> directoryModes = new ArrayList<>();
  private long entries;
  private long bytes;
  private long skipped;

  /** The result: entries written and entries skipped (devices, FIFOs). */
  record Result(long entries, long bytes, long skipped) {}

  TarExtractor(SecureFs fs, CommandUser user, DirHandle target) {
    this.fs = fs;
    this.user = user;
    this.target = target;
  }

  Result extract(InputStream body) throws IOException {
    TarArchiveInputStream tar = new TarArchiveInputStream(decompressed(body), "UTF-8");
    try {
      for (TarArchiveEntry entry = tar.getNextEntry(); entry != null; entry = tar.getNextEntry()) {
        if (++entries > MAX_ENTRIES) {
          throw HttpError.badRequest("the tar holds more than " + MAX_ENTRIES + " entries");
        }
        extract(entry, tar);
      }
    } catch (IllegalArgumentException e) {
      // commons-compress reports some malformed headers this way.
      throw HttpError.badRequest("malformed tar: " + e.getMessage());
    } catch (IOException e) {
      if (e.getClass() == IOException.class && e.getMessage() != null && isFormatError(e)) {
        throw HttpError.badRequest("malformed tar: " + e.getMessage());
      }
      throw e;
    }
    applyDirectoryModes();
    return new Result(entries - skipped, bytes, skipped);
  }

  private static boolean isFormatError(IOException e) {
    String message = e.getMessage().toLowerCase(java.util.Locale.ROOT);
    return message.contains("header") || message.contains("record") || message.contains("tar");
  }

  private static InputStream decompressed(InputStream body) throws IOException {
    BufferedInputStream in = new BufferedInputStream(body, 64 * 1024);
    in.mark(2);
    int first = in.read();
    int second = in.read();
    in.reset();
    return first == 0x1f && second == 0x8b ? new GZIPInputStream(in, 64 * 1024) : in;
  }

  private void extract(TarArchiveEntry entry, InputStream content) throws IOException {
    List<String> names = names(entry.getName());
    if (names.isEmpty()) {
      // "./" itself: the target directory.
      if (entry.isDirectory()) {
        directoryModes.add(new DirMode(names, entry.getMode() & Modes.MAX, time(entry)));
      }
      return;
    }
    if (entry.isLink()) {
      throw refused(entry, "hard links are not supported");
    }
    if (!entry.isDirectory() && !entry.isFile() && !entry.isSymbolicLink()) {
      skipped++;
      return;
    }
    try (DirHandle parent = parentOf(entry, names)) {
      String name = names.getLast();
      if (entry.isDirectory()) {
        directory(parent, name, entry, names);
      } else if (entry.isSymbolicLink()) {
        symlink(parent, name, entry);
      } else {
        file(parent, name, entry, content);
      }
    }
  }

  /** The entry's names below the target, {@code ./} and empty names dropped; 400 if it climbs. */
  private static List<String> names(String raw) {
    if (raw.startsWith("/") || raw.indexOf('\0') >= 0) {
      throw HttpError.badRequest("tar entry " + ClientPath.quote(raw) + " has an absolute name");
    }
    List<String> names = new ArrayList<>();
    for (String name : raw.split("/")) {
      if (name.isEmpty() || name.equals(".")) {
        continue;
      }
      if (name.equals("..")) {
        throw HttpError.badRequest(
            "tar entry " + ClientPath.quote(raw) + " climbs out of the target with '..'");
      }
      names.add(name);
    }
    return names;
  }

  /** Opens (creating when missing) the directories above the entry, never through a link. */
  private DirHandle parentOf(TarArchiveEntry entry, List<String> names) throws IOException {
    DirHandle dir = target.directory(Location.SELF);
    try {
      for (String name : names.subList(0, names.size() - 1)) {
        Optional<FileType> type = dir.typeOf(name);
        if (type.isPresent() && type.get() != FileType.DIRECTORY) {
          throw refused(
              entry,
              "it would pass through "
                  + ClientPath.quote(dir.path().resolve(name))
                  + ", which is not a directory");
        }
        DirHandle child =
            type.isPresent() ? dir.directory(name) : fs.createdDirectoryIn(dir, name, 0755);
        dir.close();
        dir = child;
      }
      return dir;
    } catch (IOException | RuntimeException e) {
      dir.close();
      throw e;
    }
  }

  private void directory(DirHandle parent, String name, TarArchiveEntry entry, List<String> names)
      throws IOException {
    Optional<FileType> type = parent.typeOf(name);
    if (type.isPresent() && type.get() != FileType.DIRECTORY) {
      throw refused(
          entry, ClientPath.quote(parent.path().resolve(name)) + " exists and is not a directory");
    }
    if (type.isEmpty()) {
      // Created writable; the entry's own bits are set at the end, as tar does, so a read-only
      // directory can still receive the entries that follow it.
      fs.createdDirectoryIn(parent, name, 0755).close();
    }
    directoryModes.add(new DirMode(names, entry.getMode() & Modes.MAX, time(entry)));
  }

  private void symlink(DirHandle parent, String name, TarArchiveEntry entry) throws IOException {
    Optional<FileType> type = parent.typeOf(name);
    if (type.equals(Optional.of(FileType.DIRECTORY))) {
      throw refused(entry, ClientPath.quote(parent.path().resolve(name)) + " is a directory");
    }
    String linkTarget = entry.getLinkName();
    fs.requireInsideRoots(
        parent.path().resolve(name), parent.path().resolve(linkTarget).normalize());
    if (type.isPresent()) {
      fs.deleteEntry(parent, name, type.get(), false);
    }
    fs.createLink(parent, name, linkTarget);
  }

  private void file(DirHandle parent, String name, TarArchiveEntry entry, InputStream content)
      throws IOException {
    if (parent.typeOf(name).equals(Optional.of(FileType.DIRECTORY))) {
      throw refused(entry, ClientPath.quote(parent.path().resolve(name)) + " is a directory");
    }
    bytes += entry.getSize();
    if (bytes > MAX_BYTES) {
      throw HttpError.badRequest("the tar holds more than " + MAX_BYTES + " bytes of content");
    }
    try (StagedFile staged = StagedFile.create(parent.directory(Location.SELF), name, user)) {
      long copied = content.transferTo(staged.out());
      if (copied != entry.getSize()) {
        throw HttpError.badRequest(
            "tar entry " + ClientPath.quote(entry.getName()) + " is truncated");
      }
      staged.mode(entry.getMode() & Modes.MAX);
      staged.modified(time(entry));
      staged.commit();
    }
  }

  private void applyDirectoryModes() throws IOException {
    // Deepest first, so a read-only parent does not stop its children from being set.
    for (DirMode dir : directoryModes.reversed()) {
      try (DirHandle handle = walk(dir.names())) {
        handle.stream()
            .getFileAttributeView(java.nio.file.attribute.PosixFileAttributeView.class)
            .setPermissions(Modes.permissions(dir.mode()));
        handle.stream()
            .getFileAttributeView(java.nio.file.attribute.BasicFileAttributeView.class)
            .setTimes(dir.modified(), null, null);
      }
    }
  }

  private DirHandle walk(List<String> names) throws IOException {
    DirHandle dir = target.directory(Location.SELF);
    for (String name : names) {
      DirHandle child;
      try {
        child = dir.directory(name);
      } finally {
        dir.close();
      }
      dir = child;
    }
    return dir;
  }

  private static FileTime time(TarArchiveEntry entry) {
    return FileTime.from(entry.getLastModifiedTime().toInstant());
  }

  private static HttpError refused(TarArchiveEntry entry, String why) {
    return HttpError.badRequest(
        "tar entry " + ClientPath.quote(entry.getName()) + " refused: " + why);
  }
}
