package dev.paddock.agent.files;

import dev.paddock.http.HttpError;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/**
 * Where a resolved path lands: the deepest existing directory on its way, held open, and the names
 * below it. With one name the parent exists and {@link #name()} is the entry itself (which may or
 * may not exist); with more, directories on the way are missing. The name {@code .} means the
 * directory itself (the path is a root). Owns the directory; not thread-safe.
 */
final class Location implements AutoCloseable {
  static final String SELF = ".";

  private DirHandle dir;
  private final List<String> names;

  Location(DirHandle dir, List<String> names) {
    this.dir = dir;
    this.names = List.copyOf(names);
  }

  DirHandle dir() {
    return dir;
  }

  /** The last name: the entry the path names. */
  String name() {
    return names.getLast();
  }

  /** The names below {@link #dir()}, the last one included. */
  List<String> names() {
    return names;
  }

  boolean parentExists() {
    return names.size() == 1;
  }

  boolean isRoot() {
    return name().equals(SELF);
  }

  /** The full path, as walked (links on the way followed). */
  Path path() {
    Path path = dir.path();
    for (String name : names) {
      path = name.equals(SELF) ? path : path.resolve(name);
    }
    return path;
  }

  /** 404 unless the parent directory exists. */
  Location requireParent() {
    if (!parentExists()) {
      throw HttpError.notFound(
          "the directory "
              + ClientPath.quote(dir.path().resolve(names.getFirst()))
              + " does not exist");
    }
    return this;
  }

  /** 403 when the path is one of the roots, which must not be moved or deleted. */
  Location requireNotRoot(String operation) {
    if (isRoot()) {
      throw new HttpError(
          403,
          "cannot " + operation + " " + ClientPath.quote(dir.path()) + ": it is an allowed root");
    }
    return this;
  }

  /** Hands the directory to the caller, who then closes it. */
  DirHandle takeDir() {
    DirHandle taken = dir;
    dir = null;
    return taken;
  }

  @Override
  public void close() throws IOException {
    if (dir != null) {
      dir.close();
    }
  }
}
