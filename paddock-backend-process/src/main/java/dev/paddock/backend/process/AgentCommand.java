package dev.paddock.backend.process;

import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeStartException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The argv prefix that runs an agent-server; the backend appends its own options ({@code --host},
 * {@code --port}, {@code --workspace}, {@code --events-dir}, {@code --secrets-stdin}).
 *
 * <p>The default mirrors the {@code ./paddock agent} launcher: the JDK running the control plane,
 * the options in {@code paddock-agent-server/agent-jvm.options}, the AOT cache (or CDS archive)
 * when {@code target/agent-server.cache-jdk} names this same JDK (a cache is ignored by any other),
 * and {@code target/paddock-agent-server-all.jar}, all under {@code paddock.home}.
 */
final class AgentCommand {
  private AgentCommand() {}

  /** The configured prefix, else the default one under {@code home}. */
  static List<String> resolve(ProcessSettings settings) {
    if (!settings.agentCommand().isEmpty()) {
      return settings.agentCommand();
    }
    return defaultCommand(settings.home(), Path.of(System.getProperty("java.home")));
  }

  /**
   * The launcher-equivalent command.
   *
   * @throws RuntimeStartException BINARY_MISSING when the jar or the java binary is missing
   */
  static List<String> defaultCommand(Path home, Path javaHome) {
    Path agentModule = home.resolve("paddock-agent-server");
    Path jar = agentModule.resolve("target/paddock-agent-server-all.jar");
    Path java = javaHome.resolve("bin/java");
    if (!Files.isRegularFile(jar)) {
      throw missing("agent-server jar not found at " + jar + " (build it: ./paddock build)");
    }
    if (!Files.isExecutable(java)) {
      throw missing("java not found at " + java);
    }
    List<String> argv = new ArrayList<>();
    argv.add(java.toString());
    argv.addAll(jvmOptions(agentModule.resolve("agent-jvm.options")));
    argv.addAll(cacheOptions(agentModule.resolve("target"), javaHome));
    argv.add("-jar");
    argv.add(jar.toString());
    return List.copyOf(argv);
  }

  private static RuntimeStartException missing(String detail) {
    return new RuntimeStartException(
        new RuntimeFailure(RuntimeFailure.Kind.BINARY_MISSING, detail));
  }

  private static List<String> jvmOptions(Path file) {
    if (!Files.isRegularFile(file)) {
      return List.of();
    }
    return lines(file).stream()
        .map(String::strip)
        .filter(line -> !line.isEmpty() && !line.startsWith("#"))
        .toList();
  }

  private static List<String> cacheOptions(Path target, Path javaHome) {
    Path stamp = target.resolve("agent-server.cache-jdk");
    if (!Files.isRegularFile(stamp) || !sameJdk(lines(stamp), javaHome)) {
      return List.of();
    }
    Path jar = target.resolve("paddock-agent-server-all.jar");
    Path aot = target.resolve("agent-server.aot");
    Path jsa = target.resolve("agent-server.jsa");
    if (trainedOn(aot, jar)) {
      return List.of("-XX:AOTCache=" + aot);
    }
    return trainedOn(jsa, jar) ? List.of("-XX:SharedArchiveFile=" + jsa) : List.of();
  }

  /**
   * The cache exists and was written after the jar it serves. A jar rebuilt without retraining
   * (e.g. {@code -DskipAot}) leaves an older cache, which the JVM may still map: the agent could
   * then run classes of the previous build, so such a cache is not used.
   */
  static boolean trainedOn(Path cache, Path jar) {
    try {
      return Files.isRegularFile(cache)
          && Files.getLastModifiedTime(cache).compareTo(Files.getLastModifiedTime(jar)) >= 0;
    } catch (java.io.IOException e) {
      return false;
    }
  }

  private static boolean sameJdk(List<String> stamp, Path javaHome) {
    if (stamp.isEmpty()) {
      return false;
    }
    try {
      return Path.of(stamp.get(0).strip()).toRealPath().equals(javaHome.toRealPath());
    } catch (IOException e) {
      return false;
    }
  }

  private static List<String> lines(Path file) {
    try {
      return Files.readAllLines(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    }
  }
}
