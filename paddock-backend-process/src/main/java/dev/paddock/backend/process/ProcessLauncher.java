package dev.paddock.backend.process;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The one seam through which this backend starts operating-system processes: agents and the {@code
 * kill(1)} calls that stop and continue them. Tests may substitute it; the default is {@link
 * #system()}.
 */
interface ProcessLauncher {
  /**
   * Starts {@code argv} in {@code dir} with exactly {@code env} (nothing inherited), standard input
   * a pipe, standard output and error merged into one pipe.
   *
   * @throws IOException when the program cannot be executed (missing, not executable)
   */
  Process start(List<String> argv, Path dir, Map<String, String> env) throws IOException;

  /** Launches with {@link ProcessBuilder}. */
  static ProcessLauncher system() {
    return (argv, dir, env) -> {
      ProcessBuilder builder = new ProcessBuilder(argv).directory(dir.toFile());
      builder.environment().clear();
      builder.environment().putAll(env);
      return builder.redirectErrorStream(true).start();
    };
  }
}
