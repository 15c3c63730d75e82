package dev.paddock.agent.files;

import dev.paddock.agent.user.CommandUser;
import dev.paddock.agent.user.RunAs;
import dev.paddock.http.HttpError;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Creates directories and symbolic links in an open directory: the two operations {@code
 * SecureDirectoryStream} lacks (it has no {@code mkdirat} or {@code symlinkat}).
 *
 * <p>On JDK 22 and newer ({@link Relative}) the calls are the real {@code mkdirat}/{@code
 * symlinkat}, relative to a descriptor that is proved to be the open directory itself, and made
 * with the command user's file-system ids: no name is resolved after the walk, so a directory
 * swapped for a link meanwhile cannot move the new entry out of the roots, and the entry is the
 * user's from birth. On JDK 21 they run by name ({@link AsUser} through the user switch, so a race
 * can at most make them act where that user may act anyway; {@link InProcess} when the agent and
 * its commands are one user), and callers check the result through the open parent afterwards.
 */
abstract sealed class Creator {
  static Creator of(CommandUser user) {
    Creator byName = user.switchTo().isPresent() ? new AsUser(user) : new InProcess();
    return new Relative(user.switchTo(), byName);
  }

  /**
   * Creates the directory {@code name} in {@code dir}; {@link FileAlreadyExistsException} if taken.
   */
  abstract void directory(DirHandle dir, String name) throws IOException;

  /** Creates a link {@code name} in {@code dir} holding {@code target}. */
  abstract void symlink(DirHandle dir, String name, String target) throws IOException;

  /** Whether created entries already belong to the command user. */
  abstract boolean ownsCreated();

  /**
   * {@code mkdirat}/{@code symlinkat} through {@link AtCalls}, loaded on the first creation (the
   * linker costs start-up time an agent that never creates a directory should not pay); {@code
   * byName} where they cannot be had.
   */
  static final class Relative extends Creator {
    /** Bits a new directory starts with, until the caller sets the asked mode on its descriptor. */
    private static final int PRIVATE_MODE = 0700;

    private final Optional<RunAs> as;
    private final Creator byName;
    private volatile Optional<AtCalls> calls;

    Relative(Optional<RunAs> as, Creator byName) {
      this.as = as;
      this.byName = byName;
    }

    @Override
    void directory(DirHandle dir, String name) throws IOException {
      Optional<AtCalls> at = calls();
      if (at.isEmpty()) {
        byName.directory(dir, name);
        return;
      }
      int fd = descriptorOf(at.get(), dir);
      try {
        at.get().mkdirat(fd, name, PRIVATE_MODE, as, dir.path().resolve(name).toString());
      } finally {
        at.get().close(fd);
      }
    }

    @Override
    void symlink(DirHandle dir, String name, String target) throws IOException {
      Optional<AtCalls> at = calls();
      if (at.isEmpty()) {
        byName.symlink(dir, name, target);
        return;
      }
      int fd = descriptorOf(at.get(), dir);
      try {
        at.get().symlinkat(target, fd, name, as, dir.path().resolve(name).toString());
      } finally {
        at.get().close(fd);
      }
    }

    @Override
    boolean ownsCreated() {
      return calls().isPresent() || byName.ownsCreated();
    }

    private Optional<AtCalls> calls() {
      Optional<AtCalls> loaded = calls;
      if (loaded == null) {
        loaded = AtCalls.load(Runtime.version().feature());
        calls = loaded;
      }
      return loaded;
    }

    /**
     * A descriptor of {@code dir} itself: its path opened, then compared by identity (device and
     * inode, through the {@code /proc/self/fd} link, which names the open file, not a path) with
     * the directory the walk holds open. Anything else there now, such as a link swapped in for a
     * directory on the way, is a 409, and nothing is created.
     */
    private static int descriptorOf(AtCalls at, DirHandle dir) throws IOException {
      int fd;
      try {
        fd = at.openPath(dir.path().toString());
      } catch (FileSystemException e) {
        throw DirHandle.changed(dir.path());
      }
      try {
        Object opened =
            Files.readAttributes(Path.of("/proc/self/fd/" + fd), BasicFileAttributes.class)
                .fileKey();
        if (!Objects.equals(opened, dir.attributes(Location.SELF).fileKey())) {
          throw DirHandle.changed(dir.path());
        }
        return fd;
      } catch (IOException | RuntimeException e) {
        at.close(fd);
        throw e;
      }
    }
  }

  static final class InProcess extends Creator {
    @Override
    void directory(DirHandle dir, String name) throws IOException {
      Files.createDirectory(dir.path().resolve(name));
    }

    @Override
    void symlink(DirHandle dir, String name, String target) throws IOException {
      Files.createSymbolicLink(dir.path().resolve(name), Path.of(target));
    }

    @Override
    boolean ownsCreated() {
      return false;
    }
  }

  static final class AsUser extends Creator {
    private static final long TIMEOUT_SECONDS = 30;
    private final CommandUser user;

    AsUser(CommandUser user) {
      this.user = user;
    }

    @Override
    void directory(DirHandle dir, String name) throws IOException {
      Path path = dir.path().resolve(name);
      run(List.of(program("mkdir"), "--", path.toString()), path);
    }

    @Override
    void symlink(DirHandle dir, String name, String target) throws IOException {
      Path path = dir.path().resolve(name);
      run(List.of(program("ln"), "-s", "--", target, path.toString()), path);
    }

    @Override
    boolean ownsCreated() {
      return true;
    }

    private void run(List<String> argv, Path path) throws IOException {
      Process process =
          new ProcessBuilder(user.wrap(argv))
              .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
              .redirectOutput(ProcessBuilder.Redirect.DISCARD)
              .start();
      String stderr;
      try (InputStream err = process.getErrorStream()) {
        stderr = new String(err.readNBytes(4096), StandardCharsets.UTF_8).strip();
      }
      try {
        if (!process.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
          process.destroyForcibly();
          throw new IOException("creating " + path + " took over " + TIMEOUT_SECONDS + " s");
        }
      } catch (InterruptedException e) {
        process.destroyForcibly();
        Thread.currentThread().interrupt();
        throw new IOException("interrupted while creating " + path, e);
      }
      if (process.exitValue() != 0) {
        throw failure(path, stderr);
      }
    }

    private static IOException failure(Path path, String stderr) {
      String reason = stderr.toLowerCase(Locale.ROOT);
      if (reason.contains("file exists")) {
        return new FileAlreadyExistsException(path.toString());
      }
      if (reason.contains("permission denied")) {
        return new java.nio.file.AccessDeniedException(path.toString());
      }
      if (reason.contains("no such file")) {
        return new java.nio.file.NoSuchFileException(path.toString());
      }
      if (reason.contains("not a directory")) {
        return new FileSystemException(path.toString(), null, "Not a directory");
      }
      if (reason.contains("no space")) {
        return new FileSystemException(path.toString(), null, "No space left on device");
      }
      throw new HttpError(409, "could not create " + ClientPath.quote(path) + ": " + stderr);
    }

    /** System directories only: a directory on PATH may be writable by the command user. */
    private static String program(String name) {
      for (String dir : List.of("/usr/bin", "/bin")) {
        if (Files.isExecutable(Path.of(dir, name))) {
          return dir + "/" + name;
        }
      }
      return name;
    }
  }
}
