package dev.paddock.agent.git;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A git repository a test builds with the real git CLI. Runs git with a private HOME and {@code
 * GIT_CONFIG_GLOBAL} under the test's scratch directory and no system config, so nothing from the
 * machine's configuration is read and nothing outside the test is written.
 */
final class TestRepo {
  private final Path dir;
  private final Map<String, String> env;

  private TestRepo(Path dir, Map<String, String> env) {
    this.dir = dir;
    this.env = env;
  }

  /** An environment for test git processes with its home under {@code scratch}. */
  static Map<String, String> isolatedEnv(Path scratch) throws IOException {
    Path home = Files.createDirectories(scratch.resolve("home"));
    return Map.of(
        "PATH", System.getenv().getOrDefault("PATH", "/usr/bin:/bin"),
        "HOME", home.toString(),
        "GIT_CONFIG_GLOBAL", home.resolve("gitconfig").toString(),
        "GIT_CONFIG_NOSYSTEM", "1",
        "GIT_AUTHOR_NAME", "Test Author",
        "GIT_AUTHOR_EMAIL", "author@example.invalid",
        "GIT_COMMITTER_NAME", "Test Committer",
        "GIT_COMMITTER_EMAIL", "committer@example.invalid",
        "LC_ALL", "C");
  }

  /** {@code git init -b main} in {@code dir} (created if missing). */
  static TestRepo init(Path dir, Path scratch) throws IOException {
    Files.createDirectories(dir);
    TestRepo repo = new TestRepo(dir, isolatedEnv(scratch));
    repo.git("init", "-q", "-b", "main");
    return repo;
  }

  /** An existing repository (a clone, say) driven with the same isolated environment. */
  static TestRepo at(Path dir, Path scratch) throws IOException {
    return new TestRepo(dir, isolatedEnv(scratch));
  }

  Path dir() {
    return dir;
  }

  Path path(String relative) {
    return dir.resolve(relative);
  }

  TestRepo write(String relative, String text) throws IOException {
    return write(relative, text.getBytes(StandardCharsets.UTF_8));
  }

  TestRepo write(String relative, byte[] bytes) throws IOException {
    Path file = dir.resolve(relative);
    Files.createDirectories(file.getParent());
    Files.write(file, bytes);
    return this;
  }

  TestRepo delete(String relative) throws IOException {
    Files.delete(dir.resolve(relative));
    return this;
  }

  /** Stages everything and commits; returns the new HEAD id. */
  String commitAll(String message) throws IOException {
    git("add", "-A");
    git("commit", "-q", "--allow-empty", "-m", message);
    return git("rev-parse", "HEAD");
  }

  /** Runs git in this repository, asserting success; returns trimmed standard output. */
  String git(String... args) throws IOException {
    return run(dir, env, args);
  }

  static String run(Path cwd, Map<String, String> env, String... args) throws IOException {
    List<String> argv = new ArrayList<>(List.of("git"));
    argv.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(argv).directory(cwd.toFile());
    builder.environment().clear();
    builder.environment().putAll(env);
    builder
        .redirectErrorStream(true)
        .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
    Process process = builder.start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    try {
      assertThat(process.waitFor(30, TimeUnit.SECONDS)).as("git %s finished", argv).isTrue();
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
    assertThat(process.exitValue()).as("git %s: %s", args, output).isZero();
    return output.strip();
  }
}
