package dev.paddock.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Where the agent-server build lives: the repository root (the nearest folder up from the working
 * directory that holds {@code mvnw}), its runnable jar, its JVM options file and, when another
 * build step made one, its AOT cache. The JDK is the one running the bench.
 *
 * @param root repository root
 * @param java the {@code java} launcher of the running JDK
 * @param agentJar {@code paddock-agent-server/target/paddock-agent-server-all.jar}
 * @param jvmOptions {@code paddock-agent-server/agent-jvm.options}
 * @param aotCache {@code paddock-agent-server/target/agent-server.aot}, when it exists
 */
record Checkout(Path root, Path java, Path agentJar, Path jvmOptions, Optional<Path> aotCache) {

  /** Finds the checkout from the working directory; says what to build when a file is missing. */
  static Checkout find() {
    return at(findRoot(Path.of("").toAbsolutePath()));
  }

  /** The built checkout at {@code root} (another build, to compare against in the same run). */
  static Checkout at(Path root) {
    Path agent = root.resolve("paddock-agent-server");
    Path jar = requireFile(agent.resolve("target/paddock-agent-server-all.jar"));
    Path options = requireFile(agent.resolve("agent-jvm.options"));
    Path aot = agent.resolve("target/agent-server.aot");
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    return new Checkout(
        root, java, jar, options, freshCache(aot, jar) ? Optional.of(aot) : Optional.empty());
  }

  /** The cache was trained after the jar was built (a stale one would run old classes). */
  private static boolean freshCache(Path cache, Path jar) {
    try {
      return Files.isRegularFile(cache)
          && Files.getLastModifiedTime(cache).compareTo(Files.getLastModifiedTime(jar)) >= 0;
    } catch (java.io.IOException e) {
      return false;
    }
  }

  /**
   * {@code paddock server} from the built CLI jar on port 0 with {@code data} as its data
   * directory, output merged; {@code jvmOptions} go before {@code -jar}. The caller adds settings
   * to its environment and starts it.
   */
  ProcessBuilder paddockServer(Path data, String... jvmOptions) throws IOException {
    Path cli = root.resolve("paddock-cli/target/paddock-cli-all.jar");
    if (!Files.isRegularFile(cli)) {
      throw new IOException(cli + " is missing: build first (./mvnw package -DskipTests)");
    }
    List<String> argv = new java.util.ArrayList<>();
    argv.add(java.toString());
    argv.addAll(List.of(jvmOptions));
    argv.addAll(
        List.of(
            "--enable-native-access=ALL-UNNAMED",
            "-Dpaddock.home=" + root,
            "-jar",
            cli.toString(),
            "server",
            "--port",
            "0",
            "--data-dir",
            data.toString()));
    return new ProcessBuilder(argv).redirectErrorStream(true);
  }

  /** The option lines of {@code agent-jvm.options}, for launches that cannot use {@code @file}. */
  List<String> jvmOptionLines() {
    try {
      return Files.readAllLines(jvmOptions).stream()
          .map(String::strip)
          .filter(line -> !line.isEmpty() && !line.startsWith("#"))
          .toList();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + jvmOptions, e);
    }
  }

  private static Path findRoot(Path start) {
    for (Path dir = start; dir != null; dir = dir.getParent()) {
      if (Files.isRegularFile(dir.resolve("mvnw"))) {
        return dir;
      }
    }
    throw new IllegalStateException(
        "no Paddock checkout (a folder holding mvnw) at or above "
            + start
            + "; run the bench from inside the repository");
  }

  private static Path requireFile(Path file) {
    if (!Files.isRegularFile(file)) {
      throw new IllegalStateException(
          file + " is missing; build it first: ./mvnw -q package -DskipTests");
    }
    return file;
  }
}
