package dev.paddock.agent.git;

import dev.paddock.agent.user.CommandUser;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The one place that starts git processes: the seam tests replace with another executable. Every
 * process gets an argv list (never a shell), {@code -c core.quotepath=off}, a whitelisted
 * environment with {@code GIT_TERMINAL_PROMPT=0} and {@code GIT_OPTIONAL_LOCKS=0}, a closed stdin,
 * and a timeout after which it is killed together with its descendants.
 *
 * <p>With a switched {@link CommandUser} every git runs as that user, with {@code -c
 * safe.directory=*}: git's ownership check guards a more privileged user against a repository's
 * config (hooks, fsmonitor) written by a less privileged one, and here git runs as the least
 * privileged user there is, who can run any program anyway; the check would only refuse
 * repositories the agent or an image created as root.
 *
 * <p>Threading: the calling thread blocks until the process ends; standard output and error are
 * drained by two short-lived virtual threads per process so a chatty git can never fill a pipe and
 * stall. Instances are immutable and shared by all requests.
 */
final class GitCli {
  /** Variables a git process inherits from the agent; everything else, secrets included, is not. */
  private static final Set<String> INHERITED =
      Set.of(
          "PATH",
          "HOME",
          "USER",
          "LOGNAME",
          "TMPDIR",
          "XDG_CONFIG_HOME",
          "GIT_CONFIG_GLOBAL",
          "GIT_CONFIG_SYSTEM",
          "GIT_CONFIG_NOSYSTEM",
          "GIT_EXEC_PATH");

  private static final int MAX_STDERR_BYTES = 16 << 10;
  private static final long KILL_WAIT_SECONDS = 5;

  private final String executable;
  private final Map<String, String> environment;
  private final CommandUser user;

  /**
   * @param executable the git program (a name looked up on {@code PATH}, or a path)
   * @param environment the complete base environment of every process
   * @param user who git runs as
   */
  GitCli(String executable, Map<String, String> environment, CommandUser user) {
    this.executable = executable;
    this.environment = Map.copyOf(environment);
    this.user = user;
  }

  /** {@code git} as the agent itself (tests). */
  GitCli(String executable, Map<String, String> environment) {
    this(executable, environment, CommandUser.agentItself());
  }

  /**
   * {@code git} from {@code PATH} as {@code user}, with {@link #baseEnvironment} of this JVM's
   * environment and the user's {@code HOME}.
   */
  static GitCli system(CommandUser user) {
    return new GitCli("git", user.environment(baseEnvironment(System.getenv())), user);
  }

  /** Who git runs as: scratch files git must write are given to this user. */
  CommandUser user() {
    return user;
  }

  /** The whitelisted part of {@code agentEnvironment} plus the settings that keep git quiet. */
  static Map<String, String> baseEnvironment(Map<String, String> agentEnvironment) {
    Map<String, String> env = new LinkedHashMap<>();
    agentEnvironment.forEach(
        (name, value) -> {
          if (INHERITED.contains(name)) {
            env.put(name, value);
          }
        });
    env.put("LC_ALL", "C");
    env.put("GIT_TERMINAL_PROMPT", "0");
    // Read-only commands such as diff must not refresh (and so rewrite) the user's index.
    env.put("GIT_OPTIONAL_LOCKS", "0");
    env.put("GCM_INTERACTIVE", "never");
    return env;
  }

  /** Runs {@code command}, keeping its standard output in memory (up to its cap). */
  GitResult run(GitCommand command) throws IOException {
    ProcessBuilder builder = builder(command);
    Process process = start(builder, command);
    CompletableFuture<Captured> out = drain(process.getInputStream(), command.maxOutputBytes());
    CompletableFuture<Captured> err = drain(process.getErrorStream(), MAX_STDERR_BYTES);
    int exit = await(process, command);
    Captured stdout = collect(out, process, command);
    if (stdout.overflowed()) {
      throw new GitFailure(
          command.name() + " printed more than " + command.maxOutputBytes() + " bytes");
    }
    return new GitResult(exit, stdout.bytes(), collect(err, process, command).text());
  }

  /** Runs {@code command} with its standard output written to {@code file} (replaced). */
  GitResult runToFile(GitCommand command, Path file) throws IOException {
    ProcessBuilder builder = builder(command).redirectOutput(file.toFile());
    Process process = start(builder, command);
    CompletableFuture<Captured> err = drain(process.getErrorStream(), MAX_STDERR_BYTES);
    int exit = await(process, command);
    return new GitResult(exit, new byte[0], collect(err, process, command).text());
  }

  private ProcessBuilder builder(GitCommand command) {
    List<String> argv = new ArrayList<>(List.of(executable, "-c", "core.quotepath=off"));
    if (user.switchTo().isPresent()) {
      argv.addAll(List.of("-c", "safe.directory=*"));
    }
    argv.addAll(command.args());
    ProcessBuilder builder = new ProcessBuilder(user.wrap(argv)).directory(command.cwd().toFile());
    builder.environment().clear();
    builder.environment().putAll(environment);
    builder.environment().putAll(command.env());
    return builder;
  }

  private Process start(ProcessBuilder builder, GitCommand command) {
    try {
      Process process = builder.start();
      process.getOutputStream().close();
      return process;
    } catch (IOException e) {
      throw new GitFailure(
          "cannot run " + command.name() + " in " + command.cwd() + ": " + e.getMessage(), e);
    }
  }

  private int await(Process process, GitCommand command) throws InterruptedIOException {
    try {
      if (process.waitFor(command.timeout().toMillis(), TimeUnit.MILLISECONDS)) {
        return process.exitValue();
      }
    } catch (InterruptedException e) {
      kill(process);
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while waiting for " + command.name());
    }
    kill(process);
    throw new GitFailure(
        command.name()
            + " timed out after "
            + command.timeout().toSeconds()
            + " s in "
            + command.cwd());
  }

  /** Waits briefly for a reader: the process has ended, so its pipes are at or near EOF. */
  private Captured collect(CompletableFuture<Captured> reader, Process process, GitCommand command)
      throws InterruptedIOException {
    try {
      return reader.get(KILL_WAIT_SECONDS, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new InterruptedIOException("interrupted while reading " + command.name());
    } catch (TimeoutException e) {
      // A descendant still holds the pipe open after git exited.
      kill(process);
      throw new GitFailure(command.name() + " left a process holding its output open", e);
    } catch (ExecutionException e) {
      throw new GitFailure("cannot read the output of " + command.name(), e.getCause());
    }
  }

  private static CompletableFuture<Captured> drain(InputStream in, long cap) {
    CompletableFuture<Captured> result = new CompletableFuture<>();
    Thread.ofVirtual()
        .name("paddock-git-pipe")
        .start(
            () -> {
              try (in) {
                result.complete(Captured.read(in, cap));
              } catch (IOException | RuntimeException e) {
                result.completeExceptionally(e);
              }
            });
    return result;
  }

  /** SIGKILLs the process and its descendants and waits (bounded) for it to be reaped. */
  private static void kill(Process process) {
    process.descendants().forEach(ProcessHandle::destroyForcibly);
    process.destroyForcibly();
    boolean interrupted = false;
    try {
      process.waitFor(KILL_WAIT_SECONDS, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      interrupted = true;
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** The first {@code cap} bytes of a stream that was read to its end. */
  private record Captured(byte[] bytes, boolean overflowed) {
    static Captured read(InputStream in, long cap) throws IOException {
      ByteArrayOutputStream kept = new ByteArrayOutputStream();
      byte[] buffer = new byte[8192];
      boolean overflowed = false;
      for (int n; (n = in.read(buffer)) >= 0; ) {
        int room = (int) Math.min(n, Math.max(0, cap - kept.size()));
        kept.write(buffer, 0, room);
        overflowed |= room < n;
      }
      return new Captured(kept.toByteArray(), overflowed);
    }

    String text() {
      return new String(bytes, StandardCharsets.UTF_8);
    }
  }
}
