package dev.paddock.agent.files;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.apache.commons.compress.archivers.tar.TarArchiveEntry;
import org.apache.commons.compress.archivers.tar.TarArchiveOutputStream;
import org.apache.commons.compress.archivers.tar.TarConstants;

/**
 * Writes tar entries to a stream: POSIX/PAX headers for long or non-ASCII names and for sizes
 * beyond 8 GiB. A file's content is written size-exact, see {@link #copyExactly}. Not thread-safe.
 */
final class TarEntryWriter implements Closeable {
  private static final int COPY_BUFFER_BYTES = 64 * 1024;
  private static final int TYPE_FILE = 0100000;
  private static final int TYPE_DIRECTORY = 040000;
  private static final int TYPE_SYMLINK = 0120000;

  private final TarArchiveOutputStream tar;
  private final byte[] buffer = new byte[COPY_BUFFER_BYTES];

  TarEntryWriter(OutputStream out) {
    tar = new TarArchiveOutputStream(out, StandardCharsets.UTF_8.name());
    tar.setLongFileMode(TarArchiveOutputStream.LONGFILE_POSIX);
    tar.setBigNumberMode(TarArchiveOutputStream.BIGNUMBER_POSIX);
    tar.setAddPaxHeadersForNonAsciiNames(true);
  }

  /** A directory entry; {@code name} without the trailing {@code /}. */
  void directory(String name, int permissions, FileTime modified) throws IOException {
    TarArchiveEntry entry = new TarArchiveEntry(name + "/");
    entry.setMode(TYPE_DIRECTORY | permissions);
    entry.setModTime(seconds(modified));
    tar.putArchiveEntry(entry);
    tar.closeArchiveEntry();
  }

  /** A symbolic link entry pointing at {@code target} as written in the link. */
  void symlink(String name, String target, FileTime modified) throws IOException {
    TarArchiveEntry entry = new TarArchiveEntry(name, TarConstants.LF_SYMLINK);
    entry.setLinkName(target);
    entry.setMode(TYPE_SYMLINK | 0777);
    entry.setModTime(seconds(modified));
    tar.putArchiveEntry(entry);
    tar.closeArchiveEntry();
  }

  /**
   * A regular file entry of exactly {@code size} bytes taken from {@code content}.
   *
   * @return how many bytes {@code content} supplied (less than {@code size} if it ended early)
   */
  long file(String name, int permissions, FileTime modified, long size, InputStream content)
      throws IOException {
    TarArchiveEntry entry = new TarArchiveEntry(name);
    entry.setMode(TYPE_FILE | permissions);
    entry.setModTime(seconds(modified));
    entry.setSize(size);
    tar.putArchiveEntry(entry);
    long supplied = copyExactly(content, tar, size, buffer);
    tar.closeArchiveEntry();
    return supplied;
  }

  /** Writes the end-of-archive records; the underlying stream stays open. */
  void finish() throws IOException {
    tar.finish();
  }

  @Override
  public void close() throws IOException {
    tar.close();
  }

  /**
   * Copies exactly {@code size} bytes to {@code out}: a source that grew since its size was taken
   * is cut at {@code size}, one that shrank is padded with zero bytes. The tar header already
   * promised {@code size}, so any other count would misalign every later entry.
   *
   * @return the bytes taken from {@code in}
   */
  static long copyExactly(InputStream in, OutputStream out, long size, byte[] buffer)
      throws IOException {
    long copied = 0;
    while (copied < size) {
      int n = in.read(buffer, 0, (int) Math.min(buffer.length, size - copied));
      if (n < 0) {
        break;
      }
      out.write(buffer, 0, n);
      copied += n;
    }
    long supplied = copied;
    if (copied < size) {
      Arrays.fill(buffer, (byte) 0);
    }
    while (copied < size) {
      int n = (int) Math.min(buffer.length, size - copied);
      out.write(buffer, 0, n);
      copied += n;
    }
    return supplied;
  }

  /** The tar mode bits of a permission set. */
  static int permissionBits(Set<PosixFilePermission> permissions) {
    int bits = 0;
    for (PosixFilePermission permission : permissions) {
      // OWNER_READ (ordinal 0) is 0400 ... OTHERS_EXECUTE (ordinal 8) is 01.
      bits |= 1 << (8 - permission.ordinal());
    }
    return bits;
  }

  private static FileTime seconds(FileTime time) {
    // Whole seconds fit the ustar header; finer times would add a PAX record to every entry.
    return FileTime.from(time.to(TimeUnit.SECONDS), TimeUnit.SECONDS);
  }
}
