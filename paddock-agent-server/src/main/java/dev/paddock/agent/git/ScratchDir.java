package dev.paddock.agent.git;

import dev.paddock.agent.user.CommandUser;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * A private temporary directory for one archive request, removed with everything in it by {@link
 * #close()}. Created next to the repository (its parent directory, which is outside the work tree
 * and usually on the same volume, so large spools do not fill a small {@code /tmp}), falling back
 * to {@code java.io.tmpdir} when that is not writable. Owned by the agent; see {@link
 * #createDirectoryFor} for what git, running as the command user, writes in.
 */
final class ScratchDir implements AutoCloseable {
  static final String PREFIX = ".paddock-git-";

  private final Path path;

  private ScratchDir(Path path) {
    this.path = path;
  }

  static ScratchDir beside(Path repoRoot) throws IOException {
    Path parent = repoRoot.getParent();
    if (parent != null && Files.isWritable(parent)) {
      try {
        return new ScratchDir(Files.createTempDirectory(parent, PREFIX));
      } catch (IOException e) {
        // Writable by mode bits yet refused (read-only mount, quota): use the system temp dir.
      }
    }
    return new ScratchDir(Files.createTempDirectory(PREFIX));
  }

  /**
   * Creates {@code name} (relative, its parent existing) for {@code user} to write in. When the
   * user is not the agent, the scratch directory itself stays the agent's: the user may pass
   * through it (mode 0711) but not create or swap entries in it, so files the agent writes there
   * (the patch) cannot be redirected by a link.
   */
  Path createDirectoryFor(String name, CommandUser user) throws IOException {
    if (user.switchTo().isPresent()) {
      Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("rwx--x--x"));
    }
    Path dir = Files.createDirectory(path.resolve(name));
    user.own(dir);
    return dir;
  }

  Path resolve(String name) {
    return path.resolve(name);
  }

  /** Deletes the directory tree; the first failure is thrown after trying every entry. */
  @Override
  public void close() throws IOException {
    List<Path> entries;
    try (Stream<Path> walk = Files.walk(path)) {
      entries = walk.sorted(Comparator.reverseOrder()).toList();
    }
    IOException failure = null;
    for (Path entry : entries) {
      try {
        Files.deleteIfExists(entry);
      } catch (IOException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    if (failure != null) {
      throw failure;
    }
  }
}
