package dev.paddock.agent.files;

import dev.paddock.http.HttpError;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.util.Locale;

/**
 * Maps file-system failures (a missing file, a file where a directory is needed, no permission, a
 * full disk) to the status and message a client can act on.
 */
final class FileErrors {
  private FileErrors() {}

  /**
   * The {@link HttpError} for {@code e}: 403, 404, 400 or 507 when the request or the disk is to
   * blame, else a 500 that names the file and the system's reason.
   */
  static HttpError translate(FileSystemException e) {
    String file = e.getFile() == null ? "the path" : ClientPath.quote(e.getFile());
    String reason = e.getReason() == null ? "" : e.getReason().toLowerCase(Locale.ROOT);
    if (e instanceof AccessDeniedException) {
      return new HttpError(403, "permission denied on " + file);
    }
    if (e instanceof NoSuchFileException) {
      return HttpError.notFound(file + " does not exist");
    }
    if (e instanceof FileAlreadyExistsException) {
      return HttpError.conflict(file + " already exists");
    }
    if (e instanceof DirectoryNotEmptyException) {
      return HttpError.conflict(file + " is a directory that is not empty");
    }
    if (e instanceof NotDirectoryException || reason.contains("not a directory")) {
      return HttpError.badRequest("a parent of " + file + " is not a directory");
    }
    if (reason.contains("is a directory")) {
      return HttpError.badRequest(file + " is a directory");
    }
    if (reason.contains("file name too long")) {
      // ENAMETOOLONG: a name over the file system's limit (255 bytes) is the request's fault.
      return HttpError.badRequest("a name in " + file + " is longer than the file system allows");
    }
    if (reason.contains("symbolic link")) {
      return HttpError.badRequest("too many levels of symbolic links at " + file);
    }
    if (reason.contains("no space left") || reason.contains("quota")) {
      return new HttpError(507, "no space left to write " + file);
    }
    if (reason.contains("read-only file system")) {
      return new HttpError(403, file + " is on a read-only file system");
    }
    return new HttpError(500, "file system error on " + file + ": " + e.getReason());
  }
}
