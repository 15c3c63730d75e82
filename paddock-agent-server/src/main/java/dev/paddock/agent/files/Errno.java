package dev.paddock.agent.files;

import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;

/**
 * Linux {@code errno} values of the {@link AtCalls} turned into the exceptions Java's own file
 * calls throw for them, so {@link FileErrors} answers a native failure exactly as it answers {@code
 * Files.createDirectory}'s (same classes, same reason texts).
 */
final class Errno {
  static final int EPERM = 1;
  static final int ENOENT = 2;
  static final int EACCES = 13;
  static final int EEXIST = 17;
  static final int ENOTDIR = 20;
  static final int ENOSPC = 28;
  static final int EROFS = 30;
  static final int EMLINK = 31;
  static final int ENAMETOOLONG = 36;
  static final int ELOOP = 40;
  static final int EDQUOT = 122;

  private Errno() {}

  static FileSystemException exception(int errno, String file) {
    return switch (errno) {
      case EPERM, EACCES -> new AccessDeniedException(file);
      case ENOENT -> new NoSuchFileException(file);
      case EEXIST -> new FileAlreadyExistsException(file);
      default -> new FileSystemException(file, null, reason(errno));
    };
  }

  /** {@code strerror(errno)} for the values these calls can meet. */
  static String reason(int errno) {
    return switch (errno) {
      case ENOTDIR -> "Not a directory";
      case ENOSPC -> "No space left on device";
      case EROFS -> "Read-only file system";
      case EMLINK -> "Too many links";
      case ENAMETOOLONG -> "File name too long";
      case ELOOP -> "Too many levels of symbolic links";
      case EDQUOT -> "Disk quota exceeded";
      default -> "errno " + errno;
    };
  }
}
