package dev.paddock.store;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * The control plane's data directory: it holds the master secret, key digests and webhook contents,
 * so it and the files Paddock creates in it are private to the server's user (0700/0600) from the
 * moment they exist, never created world-readable and tightened later.
 */
public final class DataDirectory {
  private static final boolean POSIX =
      FileSystems.getDefault().supportedFileAttributeViews().contains("posix");

  private DataDirectory() {}

  /**
   * Creates {@code dir} and its missing parents as private directories; an existing directory is
   * left as the operator made it.
   */
  public static Path create(Path dir) throws IOException {
    if (Files.isDirectory(dir)) {
      return dir;
    }
    if (!POSIX) {
      return Files.createDirectories(dir);
    }
    return Files.createDirectories(dir, attribute("rwx------"));
  }

  /** Creates {@code file} empty and private when it does not exist yet. */
  public static void createPrivateFile(Path file) throws IOException {
    if (!POSIX || Files.exists(file)) {
      return;
    }
    try {
      Files.createFile(file, attribute("rw-------"));
    } catch (FileAlreadyExistsException raced) {
      // Another opener created it first; its creator chose the mode.
    }
  }

  private static FileAttribute<Set<PosixFilePermission>> attribute(String mode) {
    return PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(mode));
  }
}
