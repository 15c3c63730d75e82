package dev.paddock.agent.git;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One git invocation, as data: the directory it runs in, the arguments after {@code git} (an argv
 * list, never a shell line), extra environment, a timeout and a cap on captured standard output.
 *
 * @param cwd working directory; git finds the repository from it
 * @param args arguments after {@code git} and the fixed {@code -c} options {@link GitCli} adds
 * @param env variables added to the {@link GitCli} base environment (e.g. {@code GIT_INDEX_FILE})
 * @param timeout the process is killed, with its descendants, when it runs longer
 * @param maxOutputBytes most bytes of standard output kept in memory; more is a {@link GitFailure}
 */
record GitCommand(
    Path cwd, List<String> args, Map<String, String> env, Duration timeout, long maxOutputBytes) {
  static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);
  static final long DEFAULT_MAX_OUTPUT = 16L << 20;

  GitCommand {
    Objects.requireNonNull(cwd, "cwd");
    args = List.copyOf(args);
    env = Map.copyOf(env);
    Objects.requireNonNull(timeout, "timeout");
    if (args.isEmpty()) {
      throw new IllegalArgumentException("a git command needs a subcommand");
    }
  }

  /** {@code git <args>} in {@code cwd} with the default timeout and output cap. */
  static GitCommand in(Path cwd, String... args) {
    return new GitCommand(cwd, List.of(args), Map.of(), DEFAULT_TIMEOUT, DEFAULT_MAX_OUTPUT);
  }

  static GitCommand in(Path cwd, List<String> args) {
    return new GitCommand(cwd, args, Map.of(), DEFAULT_TIMEOUT, DEFAULT_MAX_OUTPUT);
  }

  GitCommand withEnv(Map<String, String> extra) {
    return new GitCommand(cwd, args, extra, timeout, maxOutputBytes);
  }

  GitCommand withTimeout(Duration limit) {
    return new GitCommand(cwd, args, env, limit, maxOutputBytes);
  }

  GitCommand withMaxOutput(long bytes) {
    return new GitCommand(cwd, args, env, timeout, bytes);
  }

  /** {@code git <subcommand>}, for messages (arguments may be long or carry paths). */
  String name() {
    return "git " + args.get(0);
  }
}
