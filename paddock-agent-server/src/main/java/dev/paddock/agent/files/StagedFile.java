package dev.paddock.agent.files;

import dev.paddock.agent.user.CommandUser;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Set;
import java.util.UUID;

/**
 * A file written beside its target and renamed over it only when complete, so readers see the old
 * content or the new, never a half-written file. Created with the process umask like any new file;
 * when the target already exists its permissions carry over, and the command user owns it (see
 * {@link CommandUser#own}). The staged file is created exclusively and written through the channel
 * that created it, and changed without following links, so code in the sandbox swapping a link in
 * its place cannot redirect the agent's writes. {@link #close()} removes the staged file unless
 * {@link #commit()} has run. Not thread-safe.
 */
final class StagedFile implements AutoCloseable {
  private static final int COPY_BUFFER_BYTES = 64 * 1024;

  private final Path target;
  private final Path staged;
  private final FileChannel channel;
  private final CommandUser user;
  private boolean committed;

  private StagedFile(Path target, Path staged, FileChannel channel, CommandUser user) {
    this.target = target;
    this.staged = staged;
    this.channel = channel;
    this.user = user;
  }

  /**
   * Creates the target's missing parents (owned by {@code user}) and an empty staged file beside
   * the target.
   */
  static StagedFile create(Path target, CommandUser user) throws IOException {
    Path parent = target.getParent();
    user.createDirectories(parent);
    // Not derived from the target's name, which may already be as long as a name can be.
    Path staged = parent.resolve(".paddock-upload-" + UUID.randomUUID());
    // CREATE_NEW is O_EXCL: it never opens an existing file or follows a link.
    FileChannel channel =
        FileChannel.open(staged, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
    return new StagedFile(target, staged, channel, user);
  }

  /** Streams {@code content} into the staged file through one fixed buffer; returns the bytes. */
  long write(InputStream content) throws IOException {
    byte[] buffer = new byte[COPY_BUFFER_BYTES];
    long total = 0;
    OutputStream out = Channels.newOutputStream(channel);
    for (int n = content.read(buffer); n >= 0; n = content.read(buffer)) {
      out.write(buffer, 0, n);
      total += n;
    }
    return total;
  }

  /** Atomically replaces the target with the staged content, owned by the command user. */
  void commit() throws IOException {
    channel.close();
    // Permissions first: the agent may change its own file's mode without CAP_FOWNER.
    keepTargetPermissions();
    user.own(staged);
    Files.move(staged, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    committed = true;
  }

  private void keepTargetPermissions() throws IOException {
    if (!Files.isRegularFile(target, LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    PosixFileAttributeView view = Files.getFileAttributeView(target, PosixFileAttributeView.class);
    if (view != null) {
      Set<PosixFilePermission> permissions = view.readAttributes().permissions();
      Files.getFileAttributeView(staged, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
          .setPermissions(permissions);
    }
  }

  @Override
  public void close() throws IOException {
    channel.close();
    if (!committed) {
      Files.deleteIfExists(staged);
    }
  }
}
