package dev.paddock.agent.files;

import dev.paddock.agent.user.CommandUser;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.FileSystemException;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.util.Set;
import java.util.UUID;

/**
 * A file written beside its target in an open directory and renamed over it only when complete, so
 * readers see the old content or the new, never a half-written file. Created exclusively ({@code
 * O_EXCL}, relative to the open directory), written through the descriptor that created it, chowned
 * and chmodded through the directory without following links, and renamed with {@code renameat}
 * within that directory: code in the sandbox swapping links or directories around cannot redirect
 * any of it. When the target exists its permission bits carry over unless a mode is given. {@link
 * #close()} removes the staged file unless {@link #commit()} has run, which is what happens when
 * the content stream fails (a truncated body). Owns the directory handle. Not thread-safe.
 */
final class StagedFile implements SafeFs.PendingFile {
  private final DirHandle dir;
  private final String name;
  private final String staged;
  private final SeekableByteChannel channel;
  private final OutputStream out;
  private final CommandUser user;
  private int mode = -1;
  private FileTime modified;
  private boolean committed;

  private StagedFile(
      DirHandle dir, String name, String staged, SeekableByteChannel channel, CommandUser user) {
    this.dir = dir;
    this.name = name;
    this.staged = staged;
    this.channel = channel;
    this.out = Channels.newOutputStream(channel);
    this.user = user;
  }

  /** An empty staged file for {@code name} in {@code dir}; takes over {@code dir}. */
  static StagedFile create(DirHandle dir, String name, CommandUser user) throws IOException {
    // Not derived from the target's name, which may already be as long as a name can be.
    String staged = ".paddock-upload-" + UUID.randomUUID();
    try {
      // CREATE_NEW is O_EXCL: it never opens an existing file or follows a link.
      SeekableByteChannel channel =
          dir.stream()
              .newByteChannel(
                  Path.of(staged),
                  Set.of(
                      StandardOpenOption.CREATE_NEW,
                      StandardOpenOption.WRITE,
                      LinkOption.NOFOLLOW_LINKS));
      return new StagedFile(dir, name, staged, channel, user);
    } catch (FileSystemException e) {
      dir.close();
      throw FileErrors.translate(e);
    } catch (IOException | RuntimeException e) {
      dir.close();
      throw e;
    }
  }

  @Override
  public OutputStream out() {
    return out;
  }

  @Override
  public void mode(int mode) {
    this.mode = Modes.check(mode);
  }

  /** Sets the modification time the file gets at commit. */
  void modified(FileTime time) {
    this.modified = time;
  }

  @Override
  public void commit() throws IOException {
    channel.close();
    PosixFileAttributeView view = dir.view(staged);
    try {
      // Permissions first: the agent may change its own file's mode without CAP_FOWNER.
      view.setPermissions(Modes.permissions(mode >= 0 ? mode : targetMode(view)));
      if (modified != null) {
        view.setTimes(modified, null, null);
      }
      Ownership.give(view, user);
      dir.stream().move(Path.of(staged), dir.stream(), Path.of(name));
    } catch (FileSystemException e) {
      throw FileErrors.translate(e);
    }
    committed = true;
  }

  @Override
  public boolean commitAsTarget() throws IOException {
    channel.close();
    PosixFileAttributeView view = dir.view(staged);
    try {
      PosixFileAttributes target = dir.attributes(name);
      PosixFileAttributes mine = view.readAttributes();
      try {
        if (!mine.owner().equals(target.owner())) {
          view.setOwner(target.owner());
        }
        if (!mine.group().equals(target.group())) {
          view.setGroup(target.group());
        }
      } catch (FileSystemException e) {
        return false;
      }
      // After the owner: chown clears the set-id bits anyway.
      view.setPermissions(target.permissions());
      dir.stream().move(Path.of(staged), dir.stream(), Path.of(name));
    } catch (FileSystemException e) {
      throw FileErrors.translate(e);
    }
    committed = true;
    return true;
  }

  /** The existing target's bits, else what the staged file was created with (the umask's). */
  private int targetMode(PosixFileAttributeView staged) throws IOException {
    try {
      PosixFileAttributes target = dir.attributes(name);
      if (target.isRegularFile()) {
        return TarEntryWriter.permissionBits(target.permissions());
      }
    } catch (NoSuchFileException e) {
      // A new file.
    }
    return TarEntryWriter.permissionBits(staged.readAttributes().permissions());
  }

  @Override
  public void close() throws IOException {
    try {
      channel.close();
      if (!committed) {
        dir.stream().deleteFile(Path.of(staged));
      }
    } finally {
      dir.close();
    }
  }
}
