package dev.paddock.agent.files;

import dev.paddock.agent.user.CommandUser;
import dev.paddock.http.HttpError;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.time.Instant;
import java.util.List;
import java.util.Optional;

/**
 * Race-free access to the files under the agent's allowed roots, for every route that touches user
 * files (the file routes, and the editor and search routes).
 *
 * <p>The agent may be root while the code in the sandbox (another uid) changes the tree at any
 * moment. So no operation opens a client path by name: each walks from an open root directory one
 * component at a time through {@link java.nio.file.SecureDirectoryStream} ({@code openat} with
 * {@code O_NOFOLLOW}), and opens, creates, renames, deletes, chmods and chowns relative to the open
 * parent directory. A directory swapped for a link mid-walk is seen as a link, never followed by
 * the kernel. Links are followed only explicitly: the target text is read and the whole path is
 * walked again from a root (at most 40 links), so a link pointing out of the roots is a 403 like
 * any other path outside them.
 *
 * <p>Two operations Java offers by name only, creating a directory and creating a symbolic link,
 * are made with {@code mkdirat}/{@code symlinkat} relative to a descriptor proved to be the open
 * parent, with the {@linkplain CommandUser command user}'s file-system ids (JDK 22+; on 21 by name
 * as that user). A link's target text is read by name between two identity checks of the link.
 *
 * <p>Paths given to every method are client text: absolute, at most {@value #MAX_PATH_CHARS}
 * characters, no NUL; normalised lexically ({@code /w/../x} is {@code /x}); a trailing {@code /}
 * requires a directory. Failures are {@link HttpError}s with the status a route answers: 400 bad
 * path or wrong type, 403 outside the roots or permission denied, 404 missing, 409 exists or not
 * empty or changed while being resolved, 507 disk full. Thread-safe; every call opens and closes
 * its own descriptors, except the handles it returns, which the caller closes.
 */
public interface SafeFs {
  /** The longest path accepted (Linux {@code PATH_MAX}). */
  int MAX_PATH_CHARS = 4096;

  /**
   * Access confined to {@code roots} (absolute directories; links in the roots' own paths are
   * trusted configuration); files and directories created are owned by {@code user}.
   */
  static SafeFs create(List<Path> roots, CommandUser user) {
    return SecureFs.create(roots, user);
  }

  /** What an entry is, as {@code lstat} tells it. */
  enum FileType {
    FILE,
    DIRECTORY,
    SYMLINK,
    OTHER;

    /** The lower-case name used on the wire: {@code file}, {@code dir}, {@code symlink}. */
    public String wireName() {
      return this == DIRECTORY ? "dir" : name().toLowerCase(java.util.Locale.ROOT);
    }
  }

  /**
   * One file-system entry.
   *
   * @param name the last path element ({@code /} for the root of the file system)
   * @param path the absolute path it was found at (links on the way followed, the entry itself not)
   * @param type what the entry itself is (a link is {@link FileType#SYMLINK})
   * @param size bytes (for a link, the length of its target text)
   * @param mode permission bits, {@code 0} to {@code 0777}
   * @param modified last modification time
   * @param owner the owner's user name, or the numeric uid when no account has it
   * @param group the group's name, or the numeric gid
   * @param linkTarget a link's target text as written in the link; empty for other types
   */
  record FileEntry(
      String name,
      Path path,
      FileType type,
      long size,
      int mode,
      Instant modified,
      String owner,
      String group,
      Optional<String> linkTarget) {}

  /** An open regular file and what it was when opened. The caller closes it. */
  interface OpenFile extends AutoCloseable {
    FileEntry entry();

    /** The file's channel, read-only; positional reads do not disturb other readers. */
    FileChannel channel();

    @Override
    void close() throws IOException;
  }

  /**
   * A file being written beside its target: nothing is visible at the target until {@link
   * #commit()} renames it over the target atomically; {@link #close()} without a commit removes it.
   * Not thread-safe.
   */
  interface PendingFile extends AutoCloseable {
    /** The staged file's content stream; do not close it (close the pending file). */
    OutputStream out();

    /** Sets the permission bits the file gets at commit (default: the target's, or the umask). */
    void mode(int mode);

    /** Atomically replaces the target with the staged content, owned by the command user. */
    void commit() throws IOException;

    /**
     * Like {@link #commit()}, for rewriting an existing file: the staged file takes the target's
     * owner, group and permission bits (set-id bits are not kept) instead of the command user's and
     * {@link #mode(int)}. Returns false, with the target and the staged file untouched, when the
     * agent may not give it that owner (it is not root and the file is someone else's); 404 when
     * the target has gone.
     */
    boolean commitAsTarget() throws IOException;

    @Override
    void close() throws IOException;
  }

  /**
   * An open directory: its entries can be listed, examined and opened without the directory's path
   * being resolved again. The caller closes it. Not thread-safe.
   */
  interface Directory extends AutoCloseable {
    /** The directory's path as it was opened (links on the way followed). */
    Path path();

    /** The names of its entries ({@code .} and {@code ..} excluded), unsorted. */
    List<String> names() throws IOException;

    /** One entry, not followed if it is a link; empty if it vanished. */
    Optional<FileEntry> entry(String name) throws IOException;

    /** A subdirectory; a link there is refused (400), never followed. */
    Directory directory(String name) throws IOException;

    /** A regular file for reading; a link there is refused (400), never followed. */
    OpenFile open(String name) throws IOException;

    /**
     * The entry's attributes ({@code fstatat} with {@code AT_SYMLINK_NOFOLLOW}); a {@link
     * java.nio.file.NoSuchFileException} when there is none. For an entry's identity (its {@code
     * fileKey}) as well as its type, size and times.
     */
    PosixFileAttributes attributes(String name) throws IOException;

    /**
     * An existing regular file opened for writing in place, truncated to nothing; a link there is
     * refused (400), never followed. Not atomic for readers: for when {@link Placement#write()}
     * cannot be used (the directory is not writable, or the file's owner could not be kept).
     */
    FileChannel rewrite(String name) throws IOException;

    @Override
    void close() throws IOException;
  }

  /**
   * Where an entry is or would be created: its parent directory, opened by the walk (missing
   * parents created first with {@code createParents}, else 404), and its name there. Everything
   * done through it is relative to that open directory, so an editor can read, stage, rename and
   * write a file without any path being resolved again. The caller closes it. Not thread-safe.
   */
  interface Placement extends AutoCloseable {
    /** The entry's absolute path as walked (links on the way, and a final link, followed). */
    Path path();

    /** The open parent directory. */
    Directory parent();

    /** The entry's name in {@link #parent()}; it may not exist. */
    String name();

    /**
     * Starts writing the entry: a file staged in {@link #parent()} and renamed over the name at
     * commit (see {@link PendingFile}). Closing the placement does not close it.
     */
    PendingFile write() throws IOException;

    @Override
    void close() throws IOException;
  }

  /**
   * Places {@code path} (a final link within the roots is followed, so its target is what is
   * placed); a root itself is refused (400: it is a directory).
   */
  Placement place(String path, boolean createParents) throws IOException;

  /** Describes {@code path}; with {@code followLinks} a final link is followed (within roots). */
  FileEntry stat(String path, boolean followLinks) throws IOException;

  /**
   * The real path {@code path} resolves to (links followed, within the roots), for handing to a
   * process that runs as the command user (such as git). The path may not exist yet.
   */
  Path realPath(String path) throws IOException;

  /** Opens a regular file for reading, following links within the roots. */
  OpenFile open(String path) throws IOException;

  /** Opens a directory, following links within the roots. */
  Directory directory(String path) throws IOException;

  /**
   * Starts writing a file at {@code path} (a final link within the roots is followed, so its target
   * is replaced); {@code createParents} creates missing directories first.
   */
  PendingFile write(String path, boolean createParents) throws IOException;

  /** Writes {@code content} to {@code path} atomically (see {@link #write(String, boolean)}). */
  default void write(String path, InputStream content, boolean createParents) throws IOException {
    try (PendingFile file = write(path, createParents)) {
      content.transferTo(file.out());
      file.commit();
    }
  }

  /**
   * Creates a directory with permission bits {@code mode} (exact, not masked by the umask), and
   * with {@code parents} its missing parents ({@code 0755}); an existing directory is success when
   * {@code parents} is set, else 409. Returns whether anything was created.
   */
  boolean createDirectory(String path, boolean parents, int mode) throws IOException;

  /** Creates a symbolic link at {@code path} holding {@code target}; 409 if the name exists. */
  void createLink(String path, String target) throws IOException;

  /**
   * Renames {@code from} (a link is moved, not followed) to {@code to}; an existing {@code to} is
   * replaced only with {@code overwrite} (a non-empty directory never is), else 409.
   */
  void move(String from, String to, boolean overwrite) throws IOException;

  /**
   * Copies a file or a whole tree; links are copied as links (never followed), permission bits
   * kept, other file types skipped. An existing {@code to} is replaced only with {@code overwrite};
   * a directory copied onto a directory merges into it.
   *
   * @return the number of entries copied
   */
  long copy(String from, String to, boolean overwrite) throws IOException;

  /**
   * Deletes a file, a link (not its target) or, only with {@code recursive}, a directory and all it
   * holds (a non-empty directory without it is 409).
   *
   * @return the number of entries deleted
   */
  long delete(String path, boolean recursive) throws IOException;

  /**
   * Sets permission bits; with {@code recursive} on a whole tree (links are never followed or
   * changed).
   *
   * @return the number of entries changed
   */
  long chmod(String path, int mode, boolean recursive) throws IOException;
}
