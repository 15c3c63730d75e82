package dev.paddock.agent.files;

import dev.paddock.agent.files.SafeFs.FileEntry;
import dev.paddock.agent.files.SafeFs.FileType;
import dev.paddock.agent.user.CommandUser;
import dev.paddock.http.HttpError;
import java.io.IOException;
import java.io.InputStream;
import java.nio.channels.Channels;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/** The {@link SafeFs} of {@code SecureDirectoryStream} walks; see there for the guarantees. */
final class SecureFs implements SafeFs {
  /** The most links followed before giving up, as Linux's ELOOP limit. */
  private static final int MAX_LINK_HOPS = 40;

  private static final int PARENT_MODE = 0755;

  private final List<Path> roots;
  private final CommandUser user;
  private final Creator creator;

  private SecureFs(List<Path> roots, CommandUser user) {
    this.roots = List.copyOf(roots);
    this.user = user;
    this.creator = Creator.of(user);
  }

  static SecureFs create(List<Path> roots, CommandUser user) {
    return new SecureFs(roots.stream().map(p -> p.toAbsolutePath().normalize()).toList(), user);
  }

  // ---- the API: file-system failures become the HttpError a route answers -----------------

  @Override
  public FileEntry stat(String path, boolean followLinks) throws IOException {
    return translated(() -> statUnwrapped(path, followLinks));
  }

  @Override
  public Path realPath(String path) throws IOException {
    return translated(() -> realPathUnwrapped(path));
  }

  @Override
  public OpenFile open(String path) throws IOException {
    return translated(() -> openUnwrapped(path));
  }

  @Override
  public DirHandle directory(String path) throws IOException {
    return translated(() -> directoryUnwrapped(path));
  }

  @Override
  public PendingFile write(String path, boolean createParents) throws IOException {
    return translated(() -> writeUnwrapped(path, createParents));
  }

  @Override
  public Placement place(String path, boolean createParents) throws IOException {
    return translated(() -> placeUnwrapped(path, createParents));
  }

  @Override
  public boolean createDirectory(String path, boolean parents, int mode) throws IOException {
    return translated(() -> createDirectoryUnwrapped(path, parents, mode));
  }

  @Override
  public void createLink(String path, String target) throws IOException {
    translated(
        () -> {
          createLinkUnwrapped(path, target);
          return null;
        });
  }

  @Override
  public void move(String from, String to, boolean overwrite) throws IOException {
    translated(
        () -> {
          moveUnwrapped(from, to, overwrite);
          return null;
        });
  }

  @Override
  public long copy(String from, String to, boolean overwrite) throws IOException {
    return translated(() -> copyUnwrapped(from, to, overwrite));
  }

  @Override
  public long delete(String path, boolean recursive) throws IOException {
    return translated(() -> deleteUnwrapped(path, recursive));
  }

  @Override
  public long chmod(String path, int mode, boolean recursive) throws IOException {
    return translated(() -> chmodUnwrapped(path, mode, recursive));
  }

  private interface Operation<T> {
    T run() throws IOException;
  }

  private static <T> T translated(Operation<T> operation) throws IOException {
    try {
      return operation.run();
    } catch (FileSystemException e) {
      throw FileErrors.translate(e);
    }
  }

  // ---- resolution -------------------------------------------------------------------------

  /** Parses {@code raw} and walks it; the caller closes the location. */
  Location locate(String raw, boolean followFinal) throws IOException {
    return locate(ClientPath.parse(raw).path(), followFinal);
  }

  private Location locate(Path requested, boolean followFinal) throws IOException {
    Path path = requested;
    for (int hops = 0; hops <= MAX_LINK_HOPS; hops++) {
      RootMatch root = rootOf(requested, path);
      Object step = walk(root.real(), root.names(), followFinal);
      if (step instanceof Location location) {
        return location;
      }
      path = (Path) step;
    }
    throw HttpError.badRequest(
        "too many levels of symbolic links in " + ClientPath.quote(requested));
  }

  private record RootMatch(Path real, List<String> names) {}

  /** The root {@code path} lies in (lexically), as its real path and the names below it. */
  private RootMatch rootOf(Path requested, Path path) throws IOException {
    RootMatch best = null;
    for (Path root : roots) {
      Path real = realRoot(root);
      Path base = path.startsWith(real) ? real : path.startsWith(root) ? root : null;
      if (base != null && (best == null || base.getNameCount() > best.real().getNameCount())) {
        List<String> names = new ArrayList<>();
        base.relativize(path).forEach(p -> names.add(p.toString()));
        names.removeIf(String::isEmpty);
        best = new RootMatch(real, names);
      }
    }
    if (best != null) {
      return best;
    }
    String where =
        path.equals(requested)
            ? "path " + ClientPath.quote(requested)
            : "path "
                + ClientPath.quote(requested)
                + " leads through a link to "
                + ClientPath.quote(path)
                + ", which";
    throw new HttpError(403, where + " is outside the allowed roots " + roots);
  }

  private static Path realRoot(Path root) {
    try {
      return root.toRealPath();
    } catch (IOException e) {
      return root;
    }
  }

  /**
   * Walks {@code names} from {@code root}: a {@link Location}, or the {@link Path} to walk again
   * when a link was met (its target joined with the rest).
   */
  private static Object walk(Path root, List<String> names, boolean followFinal)
      throws IOException {
    DirHandle dir;
    try {
      dir = DirHandle.openTrusted(root);
    } catch (FileSystemException e) {
      throw FileErrors.translate(e);
    }
    if (names.isEmpty()) {
      return new Location(dir, List.of(Location.SELF));
    }
    try {
      for (int i = 0; i < names.size() - 1; i++) {
        String name = names.get(i);
        DirHandle child;
        try {
          child = dir.childHandle(name);
        } catch (NoSuchFileException e) {
          Location missing = new Location(dir, names.subList(i, names.size()));
          dir = null;
          return missing;
        } catch (FileSystemException e) {
          Optional<FileType> type = dir.typeOf(name);
          if (type.equals(Optional.of(FileType.SYMLINK))) {
            return linkTarget(dir, name, names.subList(i + 1, names.size()));
          }
          if (type.isPresent() && type.get() != FileType.DIRECTORY) {
            throw HttpError.badRequest(
                ClientPath.quote(dir.path().resolve(name)) + " is not a directory");
          }
          if (!(e instanceof java.nio.file.AccessDeniedException)) {
            // A directory now, a link or nothing a moment ago: swapped under the walk.
            throw DirHandle.changed(dir.path().resolve(name));
          }
          throw FileErrors.translate(e);
        }
        dir.close();
        dir = child;
      }
      String last = names.getLast();
      if (followFinal && dir.typeOf(last).equals(Optional.of(FileType.SYMLINK))) {
        return linkTarget(dir, last, List.of());
      }
      Location found = new Location(dir, List.of(last));
      dir = null;
      return found;
    } finally {
      if (dir != null) {
        dir.close();
      }
    }
  }

  private static Path linkTarget(DirHandle dir, String name, List<String> rest) throws IOException {
    Path next = dir.path().resolve(dir.readLink(name)).normalize();
    for (String r : rest) {
      next = next.resolve(r);
    }
    return next.normalize();
  }

  // ---- reading ----------------------------------------------------------------------------

  private FileEntry statUnwrapped(String path, boolean followLinks) throws IOException {
    ClientPath parsed = ClientPath.parse(path);
    try (Location at = locate(parsed.path(), followLinks)) {
      FileEntry entry = existing(at);
      requireDirectoryIfAsked(parsed, entry);
      return entry;
    }
  }

  private static FileEntry existing(Location at) throws IOException {
    at.requireParent();
    try {
      return at.dir().describe(at.name());
    } catch (NoSuchFileException e) {
      throw HttpError.notFound(ClientPath.quote(at.path()) + " does not exist");
    } catch (FileSystemException e) {
      throw FileErrors.translate(e);
    }
  }

  private static void requireDirectoryIfAsked(ClientPath parsed, FileEntry entry) {
    if (parsed.directoryOnly() && entry.type() != FileType.DIRECTORY) {
      throw HttpError.badRequest(
          ClientPath.quote(entry.path()) + " is not a directory, but the path ends with '/'");
    }
  }

  private Path realPathUnwrapped(String path) throws IOException {
    try (Location at = locate(path, true)) {
      return at.path();
    }
  }

  private OpenFile openUnwrapped(String path) throws IOException {
    ClientPath parsed = ClientPath.parse(path);
    try (Location at = locate(parsed.path(), true)) {
      FileEntry entry = existing(at);
      requireDirectoryIfAsked(parsed, entry);
      if (entry.type() == FileType.DIRECTORY) {
        throw HttpError.badRequest(ClientPath.quote(entry.path()) + " is a directory");
      }
      return at.dir().open(at.name());
    }
  }

  private DirHandle directoryUnwrapped(String path) throws IOException {
    try (Location at = locate(path, true)) {
      FileEntry entry = existing(at);
      if (entry.type() != FileType.DIRECTORY) {
        throw HttpError.badRequest(ClientPath.quote(entry.path()) + " is not a directory");
      }
      return at.dir().directory(at.name());
    }
  }

  // ---- writing ----------------------------------------------------------------------------

  private PendingFile writeUnwrapped(String path, boolean createParents) throws IOException {
    ClientPath parsed = ClientPath.parse(path);
    if (parsed.directoryOnly()) {
      throw HttpError.badRequest(
          "cannot write a file at " + ClientPath.quote(path) + ": the path ends with '/'");
    }
    Location at = locate(parsed.path(), true);
    try {
      if (at.isRoot()) {
        throw HttpError.badRequest(ClientPath.quote(at.path()) + " is a directory");
      }
      DirHandle parent = parentOf(at, createParents);
      return staged(parent, at.name());
    } finally {
      at.close();
    }
  }

  private Placement placeUnwrapped(String path, boolean createParents) throws IOException {
    ClientPath parsed = ClientPath.parse(path);
    try (Location at = locate(parsed.path(), true)) {
      if (at.isRoot()) {
        throw HttpError.badRequest(ClientPath.quote(at.path()) + " is a directory");
      }
      Path where = at.path();
      return new Placed(where, parentOf(at, createParents), at.name());
    }
  }

  private final class Placed implements Placement {
    private final Path path;
    private final DirHandle parent;
    private final String name;

    Placed(Path path, DirHandle parent, String name) {
      this.path = path;
      this.parent = parent;
      this.name = name;
    }

    @Override
    public Path path() {
      return path;
    }

    @Override
    public DirHandle parent() {
      return parent;
    }

    @Override
    public String name() {
      return name;
    }

    @Override
    public PendingFile write() throws IOException {
      // The staged file owns its own descriptor of the directory.
      return translated(() -> staged(parent.directory(Location.SELF), name));
    }

    @Override
    public void close() throws IOException {
      parent.close();
    }
  }

  /** A staged file for {@code name} in {@code parent} (taken over), unless a directory is there. */
  private StagedFile staged(DirHandle parent, String name) throws IOException {
    Optional<FileType> existing = parent.typeOf(name);
    if (existing.equals(Optional.of(FileType.DIRECTORY))) {
      Path where = parent.path().resolve(name);
      parent.close();
      throw HttpError.badRequest(ClientPath.quote(where) + " is a directory");
    }
    return StagedFile.create(parent, name, user);
  }

  /**
   * The entry's parent directory, opened (the caller closes it): the location's own when it exists,
   * else created with its missing parents when {@code create}, else 404.
   */
  private DirHandle parentOf(Location at, boolean create) throws IOException {
    if (!at.parentExists() && !create) {
      at.requireParent();
    }
    DirHandle dir = at.takeDir();
    List<String> missing = at.names().subList(0, at.names().size() - 1);
    try {
      for (String name : missing) {
        DirHandle child = createdDirectory(dir, name, PARENT_MODE, true);
        dir.close();
        dir = child;
      }
      return dir;
    } catch (IOException | RuntimeException e) {
      dir.close();
      throw e;
    }
  }

  /**
   * Creates {@code name} in {@code dir} as a directory with {@code mode}, or with {@code
   * existingOk} accepts a directory already there; returns it opened.
   */
  private DirHandle createdDirectory(DirHandle dir, String name, int mode, boolean existingOk)
      throws IOException {
    Path path = dir.path().resolve(name);
    boolean created = false;
    try {
      creator.directory(dir, name);
      created = true;
    } catch (FileAlreadyExistsException e) {
      if (!existingOk) {
        throw HttpError.conflict(ClientPath.quote(path) + " already exists");
      }
    } catch (FileSystemException e) {
      throw FileErrors.translate(e);
    }
    DirHandle child;
    try {
      child = dir.directory(name);
    } catch (HttpError e) {
      throw created
          ? HttpError.conflict(ClientPath.quote(path) + " changed while being created; retry")
          : HttpError.badRequest(ClientPath.quote(path) + " exists and is not a directory");
    }
    if (created) {
      try {
        child.stream()
            .getFileAttributeView(java.nio.file.attribute.PosixFileAttributeView.class)
            .setPermissions(Modes.permissions(mode));
        if (!creator.ownsCreated()) {
          Ownership.give(
              child.stream()
                  .getFileAttributeView(java.nio.file.attribute.PosixFileAttributeView.class),
              user);
        }
      } catch (IOException | RuntimeException e) {
        child.close();
        throw e;
      }
    }
    return child;
  }

  /** A directory {@code name} in {@code dir}, created with {@code mode} unless one is there. */
  DirHandle createdDirectoryIn(DirHandle dir, String name, int mode) throws IOException {
    return createdDirectory(dir, name, mode, true);
  }

  private boolean createDirectoryUnwrapped(String path, boolean parents, int mode)
      throws IOException {
    Modes.check(mode);
    try (Location at = locate(path, true)) {
      if (at.isRoot()) {
        return existingDirectory(at.path(), parents);
      }
      if (at.parentExists()) {
        Optional<FileType> type = at.dir().typeOf(at.name());
        if (type.isPresent()) {
          if (type.get() != FileType.DIRECTORY) {
            throw HttpError.badRequest(
                ClientPath.quote(at.path()) + " exists and is not a directory");
          }
          return existingDirectory(at.path(), parents);
        }
      }
      DirHandle parent = parentOf(at, parents);
      try (parent) {
        createdDirectory(parent, at.name(), mode, parents).close();
        return true;
      }
    }
  }

  private static boolean existingDirectory(Path path, boolean parents) {
    if (!parents) {
      throw HttpError.conflict(ClientPath.quote(path) + " already exists");
    }
    return false;
  }

  private void createLinkUnwrapped(String path, String target) throws IOException {
    try (Location at = locate(path, false)) {
      at.requireParent().requireNotRoot("replace");
      createLink(at.dir(), at.name(), target);
    }
  }

  /** Creates a link in {@code dir}; 409 if the name is taken, 403 if it points out of the roots. */
  void createLink(DirHandle dir, String name, String target) throws IOException {
    Path where = dir.path().resolve(name);
    if (target.isEmpty() || target.indexOf('\0') >= 0 || target.length() > MAX_PATH_CHARS) {
      throw HttpError.badRequest("invalid link target for " + ClientPath.quote(where));
    }
    requireInsideRoots(where, dir.path().resolve(target).normalize());
    if (dir.typeOf(name).isPresent()) {
      throw HttpError.conflict(ClientPath.quote(where) + " already exists");
    }
    try {
      creator.symlink(dir, name, target);
    } catch (FileAlreadyExistsException e) {
      throw HttpError.conflict(ClientPath.quote(where) + " already exists");
    } catch (FileSystemException e) {
      throw FileErrors.translate(e);
    }
    if (!dir.typeOf(name).equals(Optional.of(FileType.SYMLINK))) {
      throw HttpError.conflict(ClientPath.quote(where) + " changed while being created; retry");
    }
  }

  /** 403 unless {@code target} (absolute, normalised) is lexically inside a root. */
  void requireInsideRoots(Path link, Path target) {
    for (Path root : roots) {
      if (target.startsWith(root) || target.startsWith(realRoot(root))) {
        return;
      }
    }
    throw new HttpError(
        403,
        "the link "
            + ClientPath.quote(link)
            + " would point to "
            + ClientPath.quote(target)
            + ", outside the allowed roots "
            + roots);
  }

  // ---- moving, copying, deleting ------------------------------------------------------------

  private void moveUnwrapped(String from, String to, boolean overwrite) throws IOException {
    try (Location source = locate(from, false);
        Location target = locate(to, false)) {
      existing(source.requireNotRoot("move"));
      target.requireParent().requireNotRoot("replace");
      if (source.path().equals(target.path())) {
        return;
      }
      if (target.path().startsWith(source.path())) {
        throw HttpError.badRequest(
            "cannot move " + ClientPath.quote(source.path()) + " into itself");
      }
      if (target.dir().typeOf(target.name()).isPresent() && !overwrite) {
        throw HttpError.conflict(
            ClientPath.quote(target.path()) + " already exists; pass overwrite=true to replace it");
      }
      rename(source, target);
    }
  }

  private static void rename(Location source, Location target) throws IOException {
    try {
      source.dir().stream()
          .move(Path.of(source.name()), target.dir().stream(), Path.of(target.name()));
    } catch (AtomicMoveNotSupportedException e) {
      throw HttpError.conflict(
          "cannot move "
              + ClientPath.quote(source.path())
              + " to another file system; copy it, then delete it");
    } catch (DirectoryNotEmptyException e) {
      throw HttpError.conflict(
          ClientPath.quote(target.path()) + " is a directory that is not empty");
    } catch (FileSystemException e) {
      throw FileErrors.translate(e);
    }
  }

  private long copyUnwrapped(String from, String to, boolean overwrite) throws IOException {
    try (Location source = locate(from, false);
        Location target = locate(to, false)) {
      FileEntry entry = existing(source);
      target.requireParent();
      if (target.path().startsWith(source.path()) && entry.type() == FileType.DIRECTORY) {
        throw HttpError.badRequest(
            "cannot copy " + ClientPath.quote(source.path()) + " into itself");
      }
      DirHandle sourceDir = source.dir();
      String sourceName = source.isRoot() ? Location.SELF : source.name();
      if (target.isRoot()) {
        if (entry.type() != FileType.DIRECTORY) {
          throw HttpError.conflict(ClientPath.quote(target.path()) + " is a directory");
        }
        requireOverwrite(target.path(), overwrite);
        try (DirHandle from2 = sourceDir.directory(sourceName);
            DirHandle into = target.dir().directory(Location.SELF)) {
          return copyChildren(from2, into, overwrite);
        }
      }
      return copyEntry(sourceDir, sourceName, entry, target.dir(), target.name(), overwrite);
    }
  }

  private long copyEntry(
      DirHandle fromDir,
      String fromName,
      FileEntry entry,
      DirHandle toDir,
      String toName,
      boolean overwrite)
      throws IOException {
    Optional<FileType> existing = toDir.typeOf(toName);
    Path where = toDir.path().resolve(toName);
    switch (entry.type()) {
      case FILE -> {
        if (existing.isPresent()) {
          requireOverwrite(where, overwrite);
          if (existing.get() == FileType.DIRECTORY) {
            throw HttpError.conflict(ClientPath.quote(where) + " is a directory");
          }
        }
        copyFile(fromDir, fromName, entry, toDir, toName);
        return 1;
      }
      case SYMLINK -> {
        if (existing.isPresent()) {
          requireOverwrite(where, overwrite);
          deleteEntry(toDir, toName, existing.get(), false);
        }
        createLinkUnchecked(toDir, toName, entry.linkTarget().orElseThrow());
        return 1;
      }
      case DIRECTORY -> {
        if (existing.isPresent() && existing.get() != FileType.DIRECTORY) {
          throw HttpError.conflict(ClientPath.quote(where) + " exists and is not a directory");
        }
        if (existing.isPresent()) {
          requireOverwrite(where, overwrite);
        }
        try (DirHandle from = fromDir.directory(fromName);
            DirHandle into = createdDirectory(toDir, toName, entry.mode(), true)) {
          return 1 + copyChildren(from, into, overwrite);
        }
      }
      default -> {
        return 0;
      }
    }
  }

  private long copyChildren(DirHandle from, DirHandle into, boolean overwrite) throws IOException {
    long copied = 0;
    List<String> names = new ArrayList<>(from.names());
    names.sort(Comparator.naturalOrder());
    for (String name : names) {
      Optional<FileEntry> child = from.entry(name);
      if (child.isPresent()) {
        copied += copyEntry(from, name, child.get(), into, name, overwrite);
      }
    }
    return copied;
  }

  private void copyFile(
      DirHandle fromDir, String fromName, FileEntry entry, DirHandle toDir, String toName)
      throws IOException {
    try (OpenFile source = fromDir.open(fromName);
        InputStream in = Channels.newInputStream(source.channel());
        StagedFile copy = StagedFile.create(toDir.directory(Location.SELF), toName, user)) {
      in.transferTo(copy.out());
      copy.mode(entry.mode());
      copy.modified(java.nio.file.attribute.FileTime.from(entry.modified()));
      copy.commit();
    }
  }

  /** A copied link keeps its text: it was already there, and it is never followed here. */
  private void createLinkUnchecked(DirHandle dir, String name, String target) throws IOException {
    Path where = dir.path().resolve(name);
    try {
      creator.symlink(dir, name, target);
    } catch (FileSystemException e) {
      throw FileErrors.translate(e);
    }
    if (!dir.typeOf(name).equals(Optional.of(FileType.SYMLINK))) {
      throw HttpError.conflict(ClientPath.quote(where) + " changed while being created; retry");
    }
  }

  private static void requireOverwrite(Path where, boolean overwrite) {
    if (!overwrite) {
      throw HttpError.conflict(
          ClientPath.quote(where) + " already exists; pass overwrite=true to replace it");
    }
  }

  private long deleteUnwrapped(String path, boolean recursive) throws IOException {
    try (Location at = locate(path, false)) {
      FileEntry entry = existing(at.requireNotRoot("delete"));
      return deleteEntry(at.dir(), at.name(), entry.type(), recursive);
    }
  }

  /** Deletes {@code name} in {@code dir}, a directory's content too when {@code recursive}. */
  long deleteEntry(DirHandle dir, String name, FileType type, boolean recursive)
      throws IOException {
    Path where = dir.path().resolve(name);
    try {
      if (type != FileType.DIRECTORY) {
        dir.stream().deleteFile(Path.of(name));
        return 1;
      }
      long deleted = 0;
      if (recursive) {
        try (DirHandle child = dir.directory(name)) {
          for (String entry : child.names()) {
            Optional<FileType> childType = child.typeOf(entry);
            if (childType.isPresent()) {
              deleted += deleteEntry(child, entry, childType.get(), true);
            }
          }
        }
      }
      dir.stream().deleteDirectory(Path.of(name));
      return deleted + 1;
    } catch (DirectoryNotEmptyException e) {
      throw HttpError.conflict(
          ClientPath.quote(where) + " is a directory that is not empty; pass recursive=true");
    } catch (NoSuchFileException e) {
      return 0;
    } catch (FileSystemException e) {
      throw FileErrors.translate(e);
    }
  }

  private long chmodUnwrapped(String path, int mode, boolean recursive) throws IOException {
    Modes.check(mode);
    try (Location at = locate(path, true)) {
      FileEntry entry = existing(at);
      return chmodEntry(at.dir(), at.name(), entry.type(), mode, recursive);
    }
  }

  private static long chmodEntry(
      DirHandle dir, String name, FileType type, int mode, boolean recursive) throws IOException {
    if (type == FileType.SYMLINK || type == FileType.OTHER) {
      return 0;
    }
    long changed = 0;
    try {
      if (type == FileType.DIRECTORY && recursive) {
        try (DirHandle child = dir.directory(name)) {
          for (String entry : child.names()) {
            Optional<FileType> childType = child.typeOf(entry);
            if (childType.isPresent()) {
              changed += chmodEntry(child, entry, childType.get(), mode, true);
            }
          }
        }
      }
      dir.view(name).setPermissions(Modes.permissions(mode));
      return changed + 1;
    } catch (FileSystemException e) {
      throw FileErrors.translate(e);
    }
  }
}
