package dev.paddock.agent.edit;

import dev.paddock.http.HttpError;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;

/**
 * The one place the editor and the search routes turn a client's path into the real path they may
 * touch, with the same rules as the file routes' path guard: absolute (else 400), normalised
 * lexically, every link on its longest existing prefix followed (a dangling last link too), and the
 * result inside one of the allowed roots (else 403).
 *
 * <p>It mirrors {@code dev.paddock.agent.files.PathGuard}, which is package-private; when the
 * race-free path API of the file routes lands, this class delegates to it and nothing else in the
 * editor or the search changes. Like that guard, it confines well-behaved clients; it is not a
 * boundary against a process in the sandbox swapping a directory for a link between the check and
 * the use. Immutable and thread-safe.
 */
public final class GuardedPaths {
  /** The most links followed by hand before giving up, as Linux's ELOOP limit. */
  private static final int MAX_LINK_HOPS = 40;

  private final List<Path> roots;

  private GuardedPaths(List<Path> roots) {
    this.roots = List.copyOf(roots);
  }

  /** Paths confined to {@code roots} (absolute directories). */
  public static GuardedPaths within(List<Path> roots) {
    return new GuardedPaths(roots);
  }

  /** The real, checked path for {@code raw}; throws {@link HttpError} 400 or 403. */
  public Path resolve(String raw) throws IOException {
    Path real = realPath(parse(raw).normalize(), 0);
    if (!isInside(real)) {
      throw new HttpError(
          403, "path '" + raw + "' resolves to '" + real + "', outside the allowed roots " + roots);
    }
    return real;
  }

  /** Whether the real path {@code real} lies inside an allowed root. */
  public boolean isInside(Path real) throws IOException {
    for (Path root : roots) {
      if (real.startsWith(realPath(root, 0))) {
        return true;
      }
    }
    return false;
  }

  private static Path parse(String raw) {
    Path path;
    try {
      path = Path.of(raw);
    } catch (InvalidPathException e) {
      throw HttpError.badRequest("invalid path '" + raw + "': " + e.getReason());
    }
    if (!path.isAbsolute()) {
      throw HttpError.badRequest(
          "Invalid `path` parameter: "
              + raw
              + ". The path should be an absolute path, starting"
              + " with `/`.");
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
      // A dangling link as the last existing element: a write would create its target.
      Path target = existing.getParent().toRealPath().resolve(Files.readSymbolicLink(existing));
      return realPath(target.normalize().resolve(rest), hops + 1);
    } catch (AccessDeniedException e) {
      throw new HttpError(403, "permission denied on '" + e.getFile() + "'");
    } catch (FileSystemException e) {
      throw HttpError.badRequest("cannot resolve '" + path + "': " + e.getReason());
    }
  }
}
