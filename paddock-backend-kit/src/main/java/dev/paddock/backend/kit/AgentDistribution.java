package dev.paddock.backend.kit;

import dev.paddock.api.settings.CommonSettings;
import dev.paddock.api.settings.Setting;
import dev.paddock.api.settings.Settings;
import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeStartException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Where a built agent-server is: its shaded jar, its JVM options file, and the directory that may
 * hold an AOT cache (or CDS archive) trained for it. Found, in this order, from:
 *
 * <ol>
 *   <li>the {@link #AGENT_JAR} setting ({@code PADDOCK_AGENT_JAR}): that jar, with {@code
 *       agent-jvm.options} and the caches beside it;
 *   <li>a distribution: {@code paddock-agent-server-all.jar} in the directory of the jar this class
 *       was loaded from (the CLI's shaded jar), with the options and caches beside it;
 *   <li>a source checkout at {@link CommonSettings#HOME}: {@code
 *       paddock-agent-server/target/paddock-agent-server-all.jar}, its {@code agent-jvm.options}
 *       one level up, the caches in {@code target}.
 * </ol>
 *
 * Shared by every backend that runs the agent on a JVM it launches (process), bundles (Docker, SSH)
 * and by the benches. Immutable.
 *
 * @param jar the agent-server's shaded jar
 * @param jvmOptions its JVM options file, when there is one (one option per line, {@code #}
 *     comments)
 * @param cacheDir where {@code agent-server.aot}/{@code agent-server.jsa} and the stamp {@code
 *     agent-server.cache-jdk} (the JDK they were trained with) are looked for
 */
public record AgentDistribution(Path jar, Optional<Path> jvmOptions, Path cacheDir) {
  /** The name of the agent's shaded jar, in a checkout and in a distribution. */
  public static final String JAR_NAME = "paddock-agent-server-all.jar";

  /** The name of its JVM options file. */
  public static final String OPTIONS_NAME = "agent-jvm.options";

  /** An explicit agent jar, overriding the distribution and the checkout. */
  public static final Setting<Path> AGENT_JAR =
      Setting.path("PADDOCK_AGENT_JAR", "the agent-server's shaded jar")
          .withAliases("paddock.agent-jar")
          .withDefaultText(
              JAR_NAME + " beside the CLI jar, else <paddock.home>/paddock-agent-server/target/");

  /** The settings {@link #locate(Settings)} reads. */
  public static final List<Setting<?>> SETTINGS =
      List.of(AGENT_JAR, CommonSettings.HOME, CommonSettings.DATA_DIR);

  public AgentDistribution {
    Objects.requireNonNull(jar, "jar");
    Objects.requireNonNull(jvmOptions, "jvmOptions");
    Objects.requireNonNull(cacheDir, "cacheDir");
  }

  /**
   * The agent as the settings say (see the class comment for the order).
   *
   * @param settings declaring at least {@link #SETTINGS}
   * @throws RuntimeStartException BINARY_MISSING naming every place looked at, when none holds it
   */
  public static AgentDistribution locate(Settings settings) {
    Optional<Path> explicit = settings.find(AGENT_JAR);
    if (explicit.isPresent()) {
      return beside(explicit.get().toAbsolutePath())
          .orElseThrow(() -> missing(List.of(explicit.get())));
    }
    return locate(CommonSettings.home(settings), distributionDir());
  }

  /**
   * The agent in the distribution directory {@code dist} (if any), else in the checkout at {@code
   * home}.
   *
   * @throws RuntimeStartException BINARY_MISSING naming both places, when neither holds it
   */
  public static AgentDistribution locate(Path home, Optional<Path> dist) {
    Optional<AgentDistribution> found = dist.flatMap(d -> beside(d.resolve(JAR_NAME)));
    if (found.isPresent()) {
      return found.get();
    }
    Optional<AgentDistribution> checkout = checkout(home);
    if (checkout.isPresent()) {
      return checkout.get();
    }
    List<Path> looked = new ArrayList<>();
    dist.ifPresent(d -> looked.add(d.resolve(JAR_NAME)));
    looked.add(checkoutJar(home));
    throw missing(looked);
  }

  /** The agent of the source checkout at {@code home}, when it is built. */
  public static Optional<AgentDistribution> checkout(Path home) {
    Path jar = checkoutJar(home);
    if (!Files.isRegularFile(jar)) {
      return Optional.empty();
    }
    Path options = home.resolve("paddock-agent-server").resolve(OPTIONS_NAME);
    return Optional.of(new AgentDistribution(jar, existing(options), jar.getParent()));
  }

  /** The directory of the jar holding this class, when it was loaded from a jar. */
  static Optional<Path> distributionDir() {
    CodeSource source = AgentDistribution.class.getProtectionDomain().getCodeSource();
    if (source == null) {
      return Optional.empty();
    }
    try {
      Path location = Path.of(source.getLocation().toURI());
      return Files.isRegularFile(location)
          ? Optional.ofNullable(location.toAbsolutePath().getParent())
          : Optional.empty();
    } catch (URISyntaxException | IllegalArgumentException e) {
      return Optional.empty(); // not a file: URL (a custom class loader); no distribution
    }
  }

  private static Optional<AgentDistribution> beside(Path jar) {
    if (!Files.isRegularFile(jar)) {
      return Optional.empty();
    }
    Path dir = jar.toAbsolutePath().getParent();
    return Optional.of(new AgentDistribution(jar, existing(dir.resolve(OPTIONS_NAME)), dir));
  }

  private static Path checkoutJar(Path home) {
    return home.resolve("paddock-agent-server").resolve("target").resolve(JAR_NAME);
  }

  private static Optional<Path> existing(Path file) {
    return Files.isRegularFile(file) ? Optional.of(file) : Optional.empty();
  }

  private static RuntimeStartException missing(List<Path> looked) {
    return new RuntimeStartException(
        new RuntimeFailure(
            RuntimeFailure.Kind.BINARY_MISSING,
            "agent-server jar not found (looked at "
                + String.join(", ", looked.stream().map(Path::toString).toList())
                + "); build it with ./paddock build, or set "
                + AGENT_JAR.name()));
  }

  /** The agent's JVM options, comments and blank lines dropped; empty without a file. */
  public List<String> options() {
    if (jvmOptions.isEmpty()) {
      return List.of();
    }
    try {
      return Files.readAllLines(jvmOptions.get(), StandardCharsets.UTF_8).stream()
          .map(String::strip)
          .filter(line -> !line.isEmpty() && !line.startsWith("#"))
          .toList();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + jvmOptions.get(), e);
    }
  }

  /**
   * The argv prefix that runs this agent on the JDK at {@code javaHome}, as the {@code ./paddock
   * agent} launcher does: its {@code java}, the options, the AOT cache (or CDS archive) when it was
   * trained on this same JDK after the jar was built, then {@code -jar} and the jar. The caller
   * appends the agent's own options ({@code --port}, {@code --workspace}, {@code --secrets-stdin},
   * ...).
   *
   * @throws RuntimeStartException BINARY_MISSING when that JDK has no {@code java}
   */
  public List<String> command(Path javaHome) {
    Path java = javaHome.resolve("bin").resolve("java");
    if (!Files.isExecutable(java)) {
      throw new RuntimeStartException(
          new RuntimeFailure(RuntimeFailure.Kind.BINARY_MISSING, "java not found at " + java));
    }
    List<String> argv = new ArrayList<>();
    argv.add(java.toString());
    argv.addAll(options());
    argv.addAll(cacheOptions(javaHome));
    argv.add("-jar");
    argv.add(jar.toString());
    return List.copyOf(argv);
  }

  /** {@link #command(Path)} on the JDK running this JVM. */
  public List<String> command() {
    return command(Path.of(System.getProperty("java.home")));
  }

  /** The AOT cache (JDK 25+) or CDS archive trained for this jar on {@code javaHome}, if any. */
  public Optional<Path> trainedCache(Path javaHome) {
    Path stamp = cacheDir.resolve("agent-server.cache-jdk");
    if (!Files.isRegularFile(stamp) || !sameJdk(stamp, javaHome)) {
      return Optional.empty();
    }
    return List.of(cacheDir.resolve("agent-server.aot"), cacheDir.resolve("agent-server.jsa"))
        .stream()
        .filter(this::trainedOnJar)
        .findFirst();
  }

  private List<String> cacheOptions(Path javaHome) {
    return trainedCache(javaHome)
        .map(
            cache ->
                cache.getFileName().toString().endsWith(".aot")
                    ? "-XX:AOTCache=" + cache
                    : "-XX:SharedArchiveFile=" + cache)
        .map(List::of)
        .orElse(List.of());
  }

  /**
   * The cache exists and was written after the jar it serves. A jar rebuilt without retraining
   * (e.g. {@code -DskipAot}) leaves an older cache, which the JVM may still map: the agent could
   * then run classes of the previous build, so such a cache is not used.
   */
  boolean trainedOnJar(Path cache) {
    try {
      return Files.isRegularFile(cache)
          && Files.getLastModifiedTime(cache).compareTo(Files.getLastModifiedTime(jar)) >= 0;
    } catch (IOException e) {
      return false;
    }
  }

  private static boolean sameJdk(Path stamp, Path javaHome) {
    try {
      List<String> lines = Files.readAllLines(stamp, StandardCharsets.UTF_8);
      return !lines.isEmpty()
          && Path.of(lines.get(0).strip()).toRealPath().equals(javaHome.toRealPath());
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }
}
