package dev.paddock.agent.files;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
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
 * when the target already exists its permissions carry over. {@link #close()} removes the staged
 * file unless {@link #commit()} has run. Not thread-safe.
 */
final class StagedFile implements AutoCloseable {
  private static final int COPY_BUFFER_BYTES = 64 * 1024;

  private final Path target;
  private final Path staged;
  private boolean committed;

  private StagedFile(Path target, Path staged) {
    this.target = target;
    this.staged = staged;
  }

  /** Creates the target's missing parents and an empty staged file beside the target. */
  static StagedFile create(Path target) throws IOException {
    Path parent = target.getParent();
    Files.createDirectories(parent);
    // Not derived from the target's name, which may already be as long as a name can be.
    Path staged = parent.resolve(".paddock-upload-" + UUID.randomUUID());
    Files.newOutputStream(staged, StandardOpenOption.CREATE_NEW).close();
    return new StagedFile(target, staged);
  }

  /** Streams {@code content} into the staged file through one fixed buffer; returns the bytes. */
  long write(InputStream content) throws IOException {
    byte[] buffer = new byte[COPY_BUFFER_BYTES];
    long total = 0;
    try (OutputStream out = Files.newOutputStream(staged, StandardOpenOption.WRITE)) {
      for (int n = content.read(buffer); n >= 0; n = content.read(buffer)) {
        out.write(buffer, 0, n);
        total += n;
      }
    }
    return total;
  }

  /** Atomically replaces the target with the staged content. */
  void commit() throws IOException {
    keepTargetPermissions();
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
      Files.setPosixFilePermissions(staged, permissions);
    }
  }

  @Override
  public void close() throws IOException {
    if (!committed) {
      Files.deleteIfExists(staged);
    }
  }
}
