package dev.paddock.agent.files;

import dev.paddock.agent.files.SafeFs.FileEntry;
import dev.paddock.agent.files.SafeFs.FileType;
import dev.paddock.agent.files.SafeFs.OpenFile;
import dev.paddock.http.HttpError;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotLinkException;
import java.nio.file.Path;
import java.nio.file.SecureDirectoryStream;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * An open directory ({@code SecureDirectoryStream}: a descriptor plus {@code *at} system calls):
 * everything done through it addresses entries relative to that descriptor, with {@code
 * O_NOFOLLOW}, so renaming or replacing the directory's path meanwhile changes nothing. {@link
 * #path()} is where it was when opened, used for messages and for the few calls Java offers by name
 * only. Not thread-safe.
 */
final class DirHandle implements SafeFs.Directory {
  private static final LinkOption[] NOFOLLOW = {LinkOption.NOFOLLOW_LINKS};

  private final SecureDirectoryStream<Path> stream;
  private final Path path;
  private boolean listed;

  private DirHandle(SecureDirectoryStream<Path> stream, Path path) {
    this.stream = stream;
    this.path = path;
  }

  /** Opens a trusted directory (a root) by name. */
  static DirHandle openTrusted(Path dir) throws IOException {
    DirectoryStream<Path> stream = Files.newDirectoryStream(dir);
    if (!(stream instanceof SecureDirectoryStream<Path> secure)) {
      stream.close();
      throw new IOException(
          "this platform's file system offers no SecureDirectoryStream (openat); the file routes"
              + " cannot run safely");
    }
    return new DirHandle(secure, dir);
  }

  @Override
  public Path path() {
    return path;
  }

  SecureDirectoryStream<Path> stream() {
    return stream;
  }

  @Override
  public List<String> names() throws IOException {
    if (listed) {
      // A directory stream iterates once; a fresh descriptor of the same directory iterates again.
      try (DirHandle again = childHandle(".")) {
        return again.names();
      }
    }
    listed = true;
    List<String> names = new ArrayList<>();
    try {
      stream.forEach(p -> names.add(p.getFileName().toString()));
    } catch (java.nio.file.DirectoryIteratorException e) {
      throw e.getCause();
    }
    return names;
  }

  @Override
  public Optional<FileEntry> entry(String name) throws IOException {
    try {
      return Optional.of(describe(name));
    } catch (NoSuchFileException e) {
      return Optional.empty();
    }
  }

  /** The entry {@code name} (not followed); {@link NoSuchFileException} if absent. */
  FileEntry describe(String name) throws IOException {
    PosixFileAttributes attributes = attributes(name);
    FileType type = typeOf(attributes);
    Optional<String> target =
        type == FileType.SYMLINK ? Optional.of(readLink(name)) : Optional.empty();
    String shown = name.equals(".") ? fileName(path) : name;
    return entryOf(shown, name.equals(".") ? path : path.resolve(name), attributes, target);
  }

  static FileEntry entryOf(
      String name, Path path, PosixFileAttributes attributes, Optional<String> linkTarget) {
    return new FileEntry(
        name,
        path,
        typeOf(attributes),
        attributes.size(),
        TarEntryWriter.permissionBits(attributes.permissions()),
        attributes.lastModifiedTime().toInstant(),
        attributes.owner().getName(),
        attributes.group().getName(),
        linkTarget);
  }

  @Override
  public PosixFileAttributes attributes(String name) throws IOException {
    return view(name).readAttributes();
  }

  /** The entry's type, or empty when there is none. */
  Optional<FileType> typeOf(String name) throws IOException {
    try {
      return Optional.of(typeOf(attributes(name)));
    } catch (NoSuchFileException e) {
      return Optional.empty();
    }
  }

  PosixFileAttributeView view(String name) {
    return stream.getFileAttributeView(Path.of(name), PosixFileAttributeView.class, NOFOLLOW);
  }

  /**
   * A link's target text. Java has no {@code readlinkat}, so it is read by name, between two checks
   * that the name still is the link this descriptor sees: a swap of a directory on the way is a
   * 409, not a read of some other link.
   */
  String readLink(String name) throws IOException {
    Object before = attributes(name).fileKey();
    Path byName = path.resolve(name);
    String target;
    Object viaName;
    try {
      target = Files.readSymbolicLink(byName).toString();
      viaName = Files.readAttributes(byName, BasicFileAttributes.class, NOFOLLOW).fileKey();
    } catch (NotLinkException | NoSuchFileException e) {
      throw changed(byName);
    }
    Object after = attributes(name).fileKey();
    if (!Objects.equals(before, viaName) || !Objects.equals(before, after)) {
      throw changed(byName);
    }
    return target;
  }

  /** 409: an entry was replaced while being resolved (code in the sandbox is changing it). */
  static HttpError changed(Path where) {
    return HttpError.conflict(ClientPath.quote(where) + " changed while being resolved; retry");
  }

  @Override
  public DirHandle directory(String name) throws IOException {
    try {
      return childHandle(name);
    } catch (FileSystemException e) {
      throw notADirectoryOr(name, e);
    }
  }

  /** Opens the subdirectory {@code name} without following a link; raw file-system errors. */
  DirHandle childHandle(String name) throws IOException {
    SecureDirectoryStream<Path> child = stream.newDirectoryStream(Path.of(name), NOFOLLOW);
    return new DirHandle(child, name.equals(".") ? path : path.resolve(name));
  }

  private HttpError notADirectoryOr(String name, FileSystemException e) throws IOException {
    Optional<FileType> type = typeOf(name);
    if (type.isPresent() && type.get() != FileType.DIRECTORY) {
      return HttpError.badRequest(
          ClientPath.quote(path.resolve(name))
              + " is "
              + (type.get() == FileType.SYMLINK ? "a symbolic link" : "not a directory"));
    }
    return FileErrors.translate(e);
  }

  @Override
  public OpenFile open(String name) throws IOException {
    PosixFileAttributes attributes = regularFile(name);
    FileChannel channel = channel(name, Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS));
    return new Opened(name, path.resolve(name), attributes, channel);
  }

  @Override
  public FileChannel rewrite(String name) throws IOException {
    regularFile(name);
    return channel(
        name,
        Set.of(
            StandardOpenOption.WRITE,
            StandardOpenOption.TRUNCATE_EXISTING,
            LinkOption.NOFOLLOW_LINKS));
  }

  /** The attributes of {@code name}, which must be a regular file (400 otherwise). */
  private PosixFileAttributes regularFile(String name) throws IOException {
    PosixFileAttributes attributes;
    try {
      attributes = attributes(name);
    } catch (FileSystemException e) {
      throw FileErrors.translate(e);
    }
    FileType type = typeOf(attributes);
    Path shown = path.resolve(name);
    if (type == FileType.DIRECTORY) {
      throw HttpError.badRequest(ClientPath.quote(shown) + " is a directory");
    }
    if (type != FileType.FILE) {
      // A FIFO or device could block forever or never end; a link is never followed here.
      throw HttpError.badRequest(ClientPath.quote(shown) + " is not a regular file");
    }
    return attributes;
  }

  /** Opens {@code name} relative to this directory (the options include NOFOLLOW_LINKS). */
  private FileChannel channel(String name, Set<? extends java.nio.file.OpenOption> options)
      throws IOException {
    SeekableByteChannel channel;
    try {
      channel = stream.newByteChannel(Path.of(name), options);
    } catch (FileSystemException e) {
      throw FileErrors.translate(e);
    }
    if (channel instanceof FileChannel file) {
      return file;
    }
    channel.close();
    throw new IOException("this platform's SecureDirectoryStream opens no FileChannel");
  }

  /**
   * An opened file. Its entry is described when first asked for: the owner and group names cost a
   * {@code getpwuid}/{@code getgrgid} each (the JDK reads {@code /etc/passwd} and {@code
   * /etc/group} every time), which a search opening thousands of files or an editor reading one
   * never needs.
   */
  private static final class Opened implements OpenFile {
    private final String name;
    private final Path path;
    private final PosixFileAttributes attributes;
    private final FileChannel channel;
    private FileEntry entry;

    Opened(String name, Path path, PosixFileAttributes attributes, FileChannel channel) {
      this.name = name;
      this.path = path;
      this.attributes = attributes;
      this.channel = channel;
    }

    @Override
    public FileEntry entry() {
      if (entry == null) {
        entry = entryOf(name, path, attributes, Optional.empty());
      }
      return entry;
    }

    @Override
    public FileChannel channel() {
      return channel;
    }

    @Override
    public void close() throws IOException {
      channel.close();
    }
  }

  @Override
  public void close() throws IOException {
    stream.close();
  }

  static FileType typeOf(BasicFileAttributes attributes) {
    if (attributes.isSymbolicLink()) {
      return FileType.SYMLINK;
    }
    if (attributes.isDirectory()) {
      return FileType.DIRECTORY;
    }
    return attributes.isRegularFile() ? FileType.FILE : FileType.OTHER;
  }

  static String fileName(Path path) {
    return path.getFileName() == null ? "/" : path.getFileName().toString();
  }
}
