package dev.paddock.agent.user;

import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * Work done with another user's file-system ids ({@code setfsuid}/{@code setfsgid}), so the kernel
 * checks that user's rights: reading {@code /proc/<pid>/fd} of the command user's processes needs
 * either the same ids or {@code CAP_SYS_PTRACE}, which an agent in a container does not have. The
 * ids belong to one thread, so the work runs on a platform thread of its own that ends with it: no
 * other code ever runs with them. The implementation ({@code FfmFsIds}) calls libc through the
 * Foreign Function API, final in JDK 22, so it lives in the jar's {@code META-INF/versions/22}
 * section. Thread-safe.
 */
public interface FsIds {
  /**
   * Runs {@code work} with {@code user}'s file-system ids and answers what it answered; what it
   * threw is thrown here.
   *
   * @throws java.io.IOException when the ids cannot be switched (no {@code CAP_SETUID})
   */
  <T> T callAs(RunAs user, Callable<T> work) throws Exception;

  /**
   * The implementation for this JVM ({@code runtimeFeature} is {@code
   * Runtime.version().feature()}), or empty where there is none: a JDK older than 22, another
   * system than Linux, or a build without the JDK 22 section.
   */
  static Optional<FsIds> load(int runtimeFeature) {
    if (runtimeFeature < 22 || !System.getProperty("os.name", "").equals("Linux")) {
      return Optional.empty();
    }
    try {
      return Optional.of(
          (FsIds)
              Class.forName("dev.paddock.agent.user.FfmFsIds")
                  .getDeclaredConstructor()
                  .newInstance());
    } catch (ReflectiveOperationException | LinkageError | RuntimeException e) {
      System.getLogger("paddock.agent")
          .log(
              System.Logger.Level.WARNING,
              "setfsuid/setfsgid unavailable (" + e + "): nothing is read as the command user",
              e);
      return Optional.empty();
    }
  }
}
