package dev.paddock.agent.files;

import dev.paddock.agent.user.CommandUser;
import dev.paddock.http.HttpError;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Creates directories and symbolic links, the two operations Java offers by name only (there is no
 * {@code mkdirat} or {@code symlinkat} in {@code SecureDirectoryStream}). When the agent runs
 * commands as another user, they run as that user ({@code mkdir}, {@code ln -s} through the user
 * switch), so a directory swapped for a link between the walk and the call can at most make them
 * act where that user may act anyway, never with the agent's privilege; the new entry is then the
 * user's. Otherwise the agent and its commands are the same user and they run in process. Callers
 * check the result through the open parent afterwards.
 */
abstract sealed class Creator {
  static Creator of(CommandUser user) {
    return user.switchTo().isPresent() ? new AsUser(user) : new InProcess();
  }

  /** Creates the directory {@code path}; {@link FileAlreadyExistsException} if the name exists. */
  abstract void directory(Path path) throws IOException;

  /** Creates a link at {@code path} holding {@code target}. */
  abstract void symlink(Path path, String target) throws IOException;

  /** Whether created entries already belong to the command user. */
  abstract boolean ownsCreated();

  static final class InProcess extends Creator {
    @Override
    void directory(Path path) throws IOException {
      Files.createDirectory(path);
    }

    @Override
    void symlink(Path path, String target) throws IOException {
      Files.createSymbolicLink(path, Path.of(target));
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
    void directory(Path path) throws IOException {
      run(List.of(program("mkdir"), "--", path.toString()), path);
    }

    @Override
    void symlink(Path path, String target) throws IOException {
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
