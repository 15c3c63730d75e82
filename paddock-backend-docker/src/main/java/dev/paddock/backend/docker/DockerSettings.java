package dev.paddock.backend.docker;

import dev.paddock.api.spi.SettingValues;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.regex.Pattern;

/**
 * The Docker backend's settings, read once from the control plane's flattened settings. Every
 * setting {@code docker.x-y} may also be given as the environment variable {@code
 * PADDOCK_DOCKER_X_Y}; the property wins.
 *
 * @param dockerHost the engine ({@code docker.host}, else {@code DOCKER_HOST}, else the unix socket
 *     {@code /var/run/docker.sock})
 * @param dataDir {@code paddock.data-dir}: the runtime bundle is cached in {@code <dir>/runtime}
 * @param agentJar the agent-server's shaded jar ({@code docker.agent-jar}, default {@code
 *     <paddock.home>/paddock-agent-server/target/paddock-agent-server-all.jar})
 * @param jvmOptions the agent's JVM options file, if present next to its module
 * @param bundle a prebuilt runtime bundle directory ({@code docker.runtime-bundle}); else built
 * @param network {@code bridge} (default) or {@code host} ({@code docker.network})
 * @param bindAddress host address published ports bind to in bridge mode ({@code
 *     docker.bind-address}, default {@code 127.0.0.1})
 * @param urlPattern exposed URLs, with {@code {host}} and {@code {port}} ({@code
 *     docker.url-pattern}, default {@code http://{host}:{port}})
 * @param urlHost the {@code {host}} of exposed URLs ({@code docker.url-host}, default 127.0.0.1)
 * @param workerPorts container ports published as WORKER_1, WORKER_2... in bridge mode ({@code
 *     docker.worker-ports}, default {@code 12000,12001})
 * @param images the specs' images, the first is the default ({@code docker.image}, {@code
 *     docker.images}; default {@code paddock/sandbox:bookworm})
 * @param pull {@code missing} (default: pull an image that is not present) or {@code never}
 * @param resources default limits ({@code docker.memory} 2g, {@code docker.cpus}, {@code
 *     docker.pids-limit} 1024, {@code docker.disk})
 * @param runAs {@code uid:gid} commands run as ({@code docker.run-as}, default {@code 1000:1000})
 * @param readyTimeout start and resume wait ({@code docker.ready-timeout}, default 60 s)
 * @param stopGrace SIGTERM to SIGKILL on delete ({@code docker.stop-grace}, default 5 s)
 * @param callbackUrl the control plane's URL as seen from inside sandboxes, checked at start
 *     ({@code docker.callback-url}); given to the agent as {@code PADDOCK_CALLBACK_URL}
 * @param specEnv every spec's environment ({@code docker.spec.env.<NAME>})
 * @param instance which control plane's containers these are ({@code docker.instance}, default a
 *     digest of the data directory): the label {@code paddock.instance} that {@code list()} filters
 *     on, so two Paddocks sharing an engine never adopt or reap each other's sandboxes
 */
record DockerSettings(
    String dockerHost,
    Path dataDir,
    Path agentJar,
    Optional<Path> jvmOptions,
    Optional<Path> bundle,
    String network,
    String bindAddress,
    String urlPattern,
    String urlHost,
    List<Integer> workerPorts,
    List<String> images,
    String pull,
    Limits resources,
    String runAs,
    Duration readyTimeout,
    Duration stopGrace,
    Optional<String> callbackUrl,
    Map<String, String> specEnv,
    String instance) {

  static final String DEFAULT_IMAGE = "paddock/sandbox:bookworm";

  /** The agent's port inside the container in bridge mode. */
  static final int AGENT_PORT = 8000;

  private static final Pattern UID_GID = Pattern.compile("\\d+:\\d+");
  private static final String SPEC_ENV_PREFIX = "docker.spec.env.";

  /** Default limits of every spec. */
  record Limits(
      OptionalLong memoryBytes, OptionalDouble cpus, OptionalInt pids, OptionalLong diskBytes) {}

  DockerSettings {
    workerPorts = List.copyOf(workerPorts);
    images = List.copyOf(images);
    specEnv = Map.copyOf(specEnv);
  }

  boolean hostNetwork() {
    return network.equals("host");
  }

  static DockerSettings from(Map<String, String> settings) {
    Reader r = new Reader(settings);
    Path home = Path.of(settings.getOrDefault("paddock.home", ".")).toAbsolutePath().normalize();
    Path agentModule = home.resolve("paddock-agent-server");
    Path options = agentModule.resolve("agent-jvm.options");
    String network = r.get("network").orElse("bridge").trim().toLowerCase(Locale.ROOT);
    if (!network.equals("bridge") && !network.equals("host")) {
      throw new IllegalArgumentException(
          "docker.network: '" + network + "' is neither 'bridge' nor 'host'");
    }
    String pull = r.get("pull").orElse("missing").trim().toLowerCase(Locale.ROOT);
    if (!pull.equals("missing") && !pull.equals("never")) {
      throw new IllegalArgumentException(
          "docker.pull: '" + pull + "' is neither 'missing' nor 'never'");
    }
    String runAs = r.get("run-as").orElse("1000:1000").trim();
    if (!UID_GID.matcher(runAs).matches() || runAs.startsWith("0:")) {
      throw new IllegalArgumentException(
          "docker.run-as: '" + runAs + "' must be uid:gid of an unprivileged user, e.g. 1000:1000");
    }
    List<String> images = new ArrayList<>();
    images.add(r.get("image").orElse(DEFAULT_IMAGE).trim());
    r.get("images").map(DockerSettings::words).orElse(List.of()).stream()
        .filter(image -> !images.contains(image))
        .forEach(images::add);
    return new DockerSettings(
        Optional.ofNullable(settings.get("docker.host"))
            .or(() -> Optional.ofNullable(settings.get("DOCKER_HOST")))
            .filter(s -> !s.isBlank())
            .orElse("unix:///var/run/docker.sock"),
        dataDir(settings),
        r.get("agent-jar")
            .map(Path::of)
            .orElse(agentModule.resolve("target").resolve("paddock-agent-server-all.jar")),
        java.nio.file.Files.isRegularFile(options) ? Optional.of(options) : Optional.empty(),
        r.get("runtime-bundle").map(Path::of),
        network,
        r.get("bind-address").orElse("127.0.0.1").trim(),
        r.get("url-pattern").orElse("http://{host}:{port}").trim(),
        r.get("url-host").orElse("127.0.0.1").trim(),
        r.get("worker-ports").map(DockerSettings::words).orElse(List.of("12000", "12001")).stream()
            .map(Integer::valueOf)
            .toList(),
        images,
        pull,
        new Limits(
            SettingValues.size("docker.memory", r.get("memory").orElse("2g")),
            r.get("cpus")
                .map(Double::parseDouble)
                .map(OptionalDouble::of)
                .orElse(OptionalDouble.empty()),
            OptionalInt.of(Integer.parseInt(r.get("pids-limit").orElse("1024").trim())),
            SettingValues.size("docker.disk", r.get("disk").orElse(null))),
        runAs,
        SettingValues.duration(
            "docker.ready-timeout", r.get("ready-timeout").orElse(null), Duration.ofSeconds(60)),
        SettingValues.duration(
            "docker.stop-grace", r.get("stop-grace").orElse(null), Duration.ofSeconds(5)),
        r.get("callback-url").filter(s -> !s.isBlank()),
        specEnv(settings),
        r.get("instance").filter(s -> !s.isBlank()).orElseGet(() -> instanceOf(dataDir(settings))));
  }

  /** The URL of a published port. */
  String url(int port) {
    return urlPattern.replace("{host}", urlHost).replace("{port}", Integer.toString(port));
  }

  private record Reader(Map<String, String> settings) {
    Optional<String> get(String name) {
      String property = settings.get("docker." + name);
      if (property != null) {
        return Optional.of(property);
      }
      String env = "PADDOCK_DOCKER_" + name.toUpperCase(Locale.ROOT).replace('-', '_');
      return Optional.ofNullable(settings.get(env));
    }
  }

  private static List<String> words(String text) {
    return Arrays.stream(text.split("[,\\s]+")).filter(s -> !s.isBlank()).toList();
  }

  /** A short digest of the data directory: one control plane (or replica set) per directory. */
  static String instanceOf(Path dataDir) {
    try {
      byte[] digest =
          java.security.MessageDigest.getInstance("SHA-256")
              .digest(dataDir.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
      return java.util.HexFormat.of().formatHex(digest).substring(0, 12);
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new AssertionError("every JDK has SHA-256", e);
    }
  }

  private static Path dataDir(Map<String, String> settings) {
    return SettingValues.dataDir(settings);
  }

  private static Map<String, String> specEnv(Map<String, String> settings) {
    return SettingValues.withPrefix(settings, SPEC_ENV_PREFIX);
  }
}
