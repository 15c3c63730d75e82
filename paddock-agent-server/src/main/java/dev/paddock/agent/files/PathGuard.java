package dev.paddock.agent.files;

import dev.paddock.http.HttpError;
import java.io.IOException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;

/**
 * Turns a client-supplied path into the real path a file route may touch. The path must be absolute
 * (else 400); it is normalised lexically first (so {@code /work/../etc} is {@code /etc}), then
 * every symbolic link on its longest existing prefix is followed, including a dangling link at the
 * end, so the result names where a read or write would really land. That real path must lie inside
 * one of the configured roots, themselves resolved the same way (else 403).
 *
 * <p>This confines well-behaved clients and stops path tricks; it is not a boundary against a
 * process in the sandbox racing to swap a directory for a link between the check and the use.
 */
public final class PathGuard {
  /** The most links followed by hand before giving up, as Linux's ELOOP limit. */
  private static final int MAX_LINK_HOPS = 40;

  private final List<Path> roots;

  public PathGuard(List<Path> roots) {
    this.roots = List.copyOf(roots);
  }

  /** The real, checked path for {@code raw}; throws {@link HttpError} 400 or 403. */
  public Path resolve(String raw) throws IOException {
    Path requested = parse(raw).normalize();
    Path real = realPath(requested, 0);
    for (Path root : roots) {
      if (real.startsWith(realPath(root, 0))) {
        return real;
      }
    }
    throw new HttpError(
        403, "path '" + raw + "' resolves to '" + real + "', outside the allowed roots " + roots);
  }

  private static Path parse(String raw) {
    Path path;
    try {
      path = Path.of(raw);
    } catch (InvalidPathException e) {
      throw HttpError.badRequest("invalid path '" + raw + "': " + e.getReason());
    }
    if (!path.isAbsolute()) {
      throw HttpError.badRequest("path must be absolute, got '" + raw + "'");
    }
    return path;
  }

  /** {@code path} with all links on its longest existing prefix followed. */
  private static Path realPath(Path path, int hops) throws IOException {
    if (hops > MAX_LINK_HOPS) {
      throw HttpError.badRequest("too many levels of symbolic links in '" + path + "'");
    }
    Path existing = path;
    while (!Files.exists(existing, LinkOption.NOFOLLOW_LINKS)) {
      existing = existing.getParent();
    }
    Path rest = existing.relativize(path);
    try {
      return existing.toRealPath().resolve(rest);
    } catch (NoSuchFileException e) {
      // Only the last element of an existing prefix can fail here: it is a dangling link, and a
      // write would create its target, so follow it by hand.
      Path target = existing.getParent().toRealPath().resolve(Files.readSymbolicLink(existing));
      return realPath(target.normalize().resolve(rest), hops + 1);
    } catch (FileSystemException e) {
      throw FileErrors.translate(e);
    }
  }
}
