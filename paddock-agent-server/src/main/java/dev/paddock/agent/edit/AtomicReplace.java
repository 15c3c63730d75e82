package dev.paddock.agent.edit;

import dev.paddock.agent.files.SafeFs;
import dev.paddock.agent.files.SafeFs.PendingFile;
import dev.paddock.agent.files.SafeFs.Placement;
import dev.paddock.http.HttpError;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;

/**
 * Writes a file's new content the way editors do: into a new file staged beside it, which then
 * takes over the old file's owner, group and permission bits and is renamed over it, so readers see
 * the old content or the new, never half of it. A new file belongs to the command user, like
 * uploads. When the agent may not give the file its owner back (it is not root and the file is
 * someone else's), or may not create a file in its directory, the content is written in place
 * instead, which keeps the owner but is not atomic.
 *
 * <p>Every step goes through the {@link Placement}'s open parent directory ({@link SafeFs}): the
 * staged file is created, written, chowned and renamed relative to that descriptor, so code in the
 * sandbox swapping a directory on the way for a link cannot redirect any of it. Stateless and
 * thread-safe.
 */
final class AtomicReplace {
  private final SafeFs fs;

  AtomicReplace(SafeFs fs) {
    this.fs = fs;
  }

  /** Replaces the existing regular file at {@code at} with {@code content[0, length)}. */
  Fingerprint replace(Placement at, byte[] content, int length) throws IOException {
    try (PendingFile staged = at.write()) {
      staged.out().write(content, 0, length);
      if (staged.commitAsTarget()) {
        return Fingerprint.of(at);
      }
    } catch (HttpError e) {
      if (e.status() != 403) {
        throw e;
      }
      // The file may be writable where its directory is not: only an in-place write is possible.
    }
    return inPlace(at, content, length);
  }

  /**
   * Creates the file at {@code at} with {@code content}, owned by the command user; fails with
   * {@link FileAlreadyExistsException} when something is already there. The check runs just before
   * the rename, within the open parent (Java has no {@code renameat2(RENAME_NOREPLACE)}): a file
   * created there in that instant by another process would be replaced, never one elsewhere.
   */
  Fingerprint create(Placement at, byte[] content) throws IOException {
    try (PendingFile staged = at.write()) {
      staged.out().write(content);
      if (at.parent().entry(at.name()).isPresent()) {
        throw new FileAlreadyExistsException(at.path().toString());
      }
      staged.commit();
    }
    return Fingerprint.of(at);
  }

  /** Removes the file at {@code at} (a link there is removed, not followed). */
  void delete(Placement at) throws IOException {
    fs.delete(at.path().toString(), false);
  }

  private static Fingerprint inPlace(Placement at, byte[] content, int length) throws IOException {
    try (FileChannel channel = at.parent().rewrite(at.name())) {
      ByteBuffer buffer = ByteBuffer.wrap(content, 0, length);
      while (buffer.hasRemaining()) {
        channel.write(buffer);
      }
    }
    return Fingerprint.of(at);
  }
}
