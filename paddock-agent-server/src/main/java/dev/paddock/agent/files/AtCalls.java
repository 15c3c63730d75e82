package dev.paddock.agent.files;

import dev.paddock.agent.user.RunAs;
import java.io.IOException;
import java.util.Optional;

/**
 * The {@code *at} system calls Java's {@link java.nio.file.SecureDirectoryStream} lacks: creating a
 * directory ({@code mkdirat}) and a symbolic link ({@code symlinkat}) relative to a directory
 * descriptor. The implementation ({@code FfmAtCalls}) calls libc through the Foreign Function API,
 * final in JDK 22, so it lives in the jar's {@code META-INF/versions/22} section; {@link #load}
 * finds it on first use (an agent that never creates a directory never loads the linker).
 *
 * <p>With a {@link RunAs}, a call runs with that user's file-system ids ({@code setfsuid}/{@code
 * setfsgid}, which belong to the calling thread only, set and restored around the one call): the
 * kernel checks the user's permissions and the entry is the user's from birth, so nothing has to be
 * chowned by name afterwards. Descriptors are plain {@code int}s the caller closes with {@link
 * #close}. Thread-safe.
 */
interface AtCalls {
  /**
   * Opens {@code path} with {@code O_PATH | O_CLOEXEC}: a handle for naming, which reads nothing
   * and so cannot block on a FIFO. Links in the path are followed: the caller checks what it got.
   */
  int openPath(String path) throws IOException;

  /**
   * {@code mkdirat(dirFd, name, mode)}; failures are the {@link java.nio.file.FileSystemException}
   * Java's own {@code Files.createDirectory} would throw, naming {@code shown}.
   */
  void mkdirat(int dirFd, String name, int mode, Optional<RunAs> as, String shown)
      throws IOException;

  /** {@code symlinkat(target, dirFd, name)}; failures as for {@link #mkdirat}. */
  void symlinkat(String target, int dirFd, String name, Optional<RunAs> as, String shown)
      throws IOException;

  void close(int fd);

  /**
   * The calls for this JVM ({@code runtimeFeature} is {@code Runtime.version().feature()}), or
   * empty where they cannot be had: a JDK older than 22, another system than Linux, or a build
   * without the JDK 22 section.
   */
  static Optional<AtCalls> load(int runtimeFeature) {
    if (runtimeFeature < 22 || !System.getProperty("os.name", "").equals("Linux")) {
      return Optional.empty();
    }
    try {
      return Optional.of(
          (AtCalls)
              Class.forName("dev.paddock.agent.files.FfmAtCalls")
                  .getDeclaredConstructor()
                  .newInstance());
    } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
      // Creation still works, by name as before (see Creator); say why it is not race-free.
      System.getLogger("paddock.agent")
          .log(
              System.Logger.Level.WARNING,
              "mkdirat/symlinkat unavailable ("
                  + e
                  + "): directories and links are created by name",
              e);
      return Optional.empty();
    }
  }
}
