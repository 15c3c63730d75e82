package dev.paddock.agent.edit;

import dev.paddock.agent.user.CommandUser;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.UUID;

/**
 * Writes a file's new content the way editors do: into a new file beside it, created exclusively
 * (never through a link), which then takes over the old file's mode, owner and group and is renamed
 * over it, so readers see the old content or the new, never half of it. A new file belongs to the
 * command user, like uploads. When the agent may not give the file its owner back (it is not root
 * and the file is someone else's), the content is written in place instead, which keeps the owner
 * but is not atomic. Stateless and thread-safe.
 */
final class AtomicReplace {
  private final CommandUser user;

  AtomicReplace(CommandUser user) {
    this.user = user;
  }

  /** Replaces the existing regular file {@code file} with {@code content[0, length)}. */
  Fingerprint replace(Path file, byte[] content, int length) throws IOException {
    Map<String, Object> owner =
        Files.readAttributes(file, "unix:mode,uid,gid", LinkOption.NOFOLLOW_LINKS);
    Path staged;
    try {
      staged = stage(file, content, length);
    } catch (java.nio.file.AccessDeniedException e) {
      // The file is writable but its directory is not: only an in-place write is possible.
      return inPlace(file, content, length);
    }
    try {
      if (!takeOver(staged, owner)) {
        Files.delete(staged);
        return inPlace(file, content, length);
      }
      Files.move(staged, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } finally {
      Files.deleteIfExists(staged);
    }
    return Fingerprint.of(file);
  }

  /**
   * Creates {@code file} (and its missing parents) with {@code content}, owned by the command user;
   * fails with {@link FileAlreadyExistsException} when something is already there.
   */
  Fingerprint create(Path file, byte[] content) throws IOException {
    user.createDirectories(file.getParent());
    Path staged = stage(file, content, content.length);
    try {
      user.own(staged);
      publishNew(staged, file);
    } finally {
      Files.deleteIfExists(staged);
    }
    return Fingerprint.of(file);
  }

  /**
   * Gives {@code staged} the name {@code file} only if nothing has it: link(2) fails on an existing
   * name where rename(2) would replace it. Where links are not supported, a check and a move.
   */
  private static void publishNew(Path staged, Path file) throws IOException {
    try {
      Files.createLink(file, staged);
    } catch (FileAlreadyExistsException e) {
      throw e;
    } catch (UnsupportedOperationException | FileSystemException e) {
      Files.move(staged, file);
    }
  }

  private static Path stage(Path file, byte[] content, int length) throws IOException {
    // Not derived from the target's name, which may already be as long as a name can be.
    Path staged = file.resolveSibling(".paddock-edit-" + UUID.randomUUID());
    try (FileChannel channel =
        FileChannel.open(staged, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
      ByteBuffer buffer = ByteBuffer.wrap(content, 0, length);
      while (buffer.hasRemaining()) {
        channel.write(buffer);
      }
    }
    return staged;
  }

  /** Gives {@code staged} the old file's owner, group and mode; false when not permitted. */
  private static boolean takeOver(Path staged, Map<String, Object> owner) throws IOException {
    Map<String, Object> mine =
        Files.readAttributes(staged, "unix:uid,gid", LinkOption.NOFOLLOW_LINKS);
    try {
      if (!mine.get("uid").equals(owner.get("uid"))) {
        Files.setAttribute(staged, "unix:uid", owner.get("uid"), LinkOption.NOFOLLOW_LINKS);
      }
      if (!mine.get("gid").equals(owner.get("gid"))) {
        Files.setAttribute(staged, "unix:gid", owner.get("gid"), LinkOption.NOFOLLOW_LINKS);
      }
    } catch (FileSystemException e) {
      return false;
    }
    // After the owner: chown clears the set-id bits.
    Files.setAttribute(
        staged, "unix:mode", ((Integer) owner.get("mode")) & 07777, LinkOption.NOFOLLOW_LINKS);
    return true;
  }

  private static Fingerprint inPlace(Path file, byte[] content, int length) throws IOException {
    try (FileChannel channel =
        FileChannel.open(
            file,
            StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING,
            LinkOption.NOFOLLOW_LINKS)) {
      ByteBuffer buffer = ByteBuffer.wrap(content, 0, length);
      while (buffer.hasRemaining()) {
        channel.write(buffer);
      }
    }
    return Fingerprint.of(file);
  }
}
