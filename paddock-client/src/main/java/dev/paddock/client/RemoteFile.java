package dev.paddock.client;

/**
 * What {@code GET /api/file/stat} says about a path in a sandbox.
 *
 * @param path where it was found (links on the way followed)
 * @param type file, directory, link or anything else
 * @param mode its permission bits ({@code 0644})
 * @param size its size in bytes (0 for directories)
 */
public record RemoteFile(String path, Type type, int mode, long size) {
  /** The kinds of entry the agent reports. */
  public enum Type {
    FILE,
    DIRECTORY,
    SYMLINK,
    OTHER;

    static Type fromWire(String type) {
      return switch (type) {
        case "file" -> FILE;
        case "dir" -> DIRECTORY;
        case "symlink" -> SYMLINK;
        default -> OTHER;
      };
    }
  }

  /** True for a directory. */
  public boolean isDirectory() {
    return type == Type.DIRECTORY;
  }
}
