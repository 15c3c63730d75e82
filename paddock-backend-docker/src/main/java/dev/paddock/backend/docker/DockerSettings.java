package dev.paddock.backend.docker;

import dev.paddock.api.KeyDigest;
import dev.paddock.api.Resources;
import dev.paddock.api.settings.CommonSettings;
import dev.paddock.api.settings.Setting;
import dev.paddock.api.settings.Settings;
import dev.paddock.api.spi.RuntimeStartException;
import dev.paddock.backend.kit.AgentDistribution;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.regex.Pattern;

/**
 * The Docker backend's settings, declared in {@link #DECLARED} and read once from the control
 * plane's flattened settings. Every setting {@code docker.x-y} may also be given as the environment
 * variable {@code PADDOCK_DOCKER_X_Y}; within one source the property wins, otherwise the usual
 * precedence (flag, environment, file) holds.
 *
 * @param dockerHost the engine ({@code docker.host}, else {@code DOCKER_HOST}, else the unix socket
 *     {@code /var/run/docker.sock})
 * @param dataDir {@code paddock.data-dir}: the runtime bundle is cached in {@code <dir>/runtime}
 * @param agentJar the agent-server's shaded jar ({@code docker.agent-jar}, default the one {@link
 *     AgentDistribution} finds: beside the CLI jar in a distribution, else {@code
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
 * @param specTimeout every spec's default lifetime ({@code docker.spec.timeout})
 * @param specIdleTimeout every spec's default idle timeout ({@code docker.spec.idle-timeout})
 * @param instance which control plane's containers these are ({@code docker.instance}, default a
 *     digest of the data directory): the label {@code paddock.instance} that {@code list()} filters
 *     on, so two Paddocks sharing an engine never adopt or reap each other's sandboxes
 * @param runtime the OCI runtime containers run under ({@code docker.runtime}, e.g. {@code runsc}
 *     for gVisor; default the engine's default runtime, usually runc); checked against the engine's
 *     registered runtimes when the backend is created
 * @param imageAgentImages images offered as specs that bring their own agent-server ({@code
 *     docker.agent-server-images}, e.g. OpenHands' agent-server images): their specs say {@link
 *     dev.paddock.api.SandboxSpec.AgentServer#IMAGE}, and sandboxes run their entry point with
 *     OpenHands' launch contract ({@link AgentServerLaunch})
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
    Resources resources,
    String runAs,
    Duration readyTimeout,
    Duration stopGrace,
    Optional<String> callbackUrl,
    Map<String, String> specEnv,
    Optional<Duration> specTimeout,
    Optional<Duration> specIdleTimeout,
    String instance,
    Optional<String> runtime,
    List<String> imageAgentImages) {

  static final String DEFAULT_IMAGE = "paddock/sandbox:bookworm";

  /** The agent's port inside the container in bridge mode. */
  static final int AGENT_PORT = 8000;

  private static final Pattern UID_GID = Pattern.compile("\\d+:\\d+");

  static final Setting<String> HOST =
      docker(Setting.string("docker.host", "the Docker Engine: unix:///path or tcp://host:port"))
          .withAliases("DOCKER_HOST")
          .withDefault("unix:///var/run/docker.sock");
  static final Setting<Path> AGENT_JAR =
      docker(Setting.path("docker.agent-jar", "the agent-server's shaded jar"))
          .withDefaultText(
              AgentDistribution.JAR_NAME
                  + " beside the CLI jar (a distribution), else"
                  + " <paddock.home>/paddock-agent-server/target/");
  static final Setting<Path> RUNTIME_BUNDLE =
      docker(
          Setting.path(
              "docker.runtime-bundle",
              "a prebuilt agent runtime bundle directory (else built once into <data dir>/runtime)"));
  static final Setting<String> NETWORK =
      docker(
              Setting.oneOf(
                  "docker.network",
                  "bridge: published ports on the bind address; host: the host's network",
                  "bridge",
                  "host"))
          .withDefault("bridge");
  static final Setting<String> BIND_ADDRESS =
      docker(Setting.string("docker.bind-address", "host address published ports bind to"))
          .withDefault("127.0.0.1");
  static final Setting<String> URL_PATTERN =
      docker(Setting.string("docker.url-pattern", "exposed URLs, with {host} and {port}"))
          .withDefault("http://{host}:{port}");
  static final Setting<String> URL_HOST =
      docker(Setting.string("docker.url-host", "the {host} of exposed URLs"))
          .withDefault("127.0.0.1");
  static final Setting<List<Integer>> WORKER_PORTS =
      docker(
              Setting.of(
                  "docker.worker-ports",
                  "container ports published as WORKER_1, WORKER_2... in bridge mode",
                  "port numbers (1-65535) separated by commas",
                  DockerSettings::ports))
          .withDefault(List.of(12000, 12001));
  static final Setting<String> IMAGE =
      docker(Setting.string("docker.image", "the default spec's image (its id)"))
          .withDefault(DEFAULT_IMAGE);
  static final Setting<List<String>> IMAGES =
      docker(Setting.list("docker.images", "more images offered as specs"));
  static final Setting<String> PULL =
      docker(
              Setting.oneOf(
                  "docker.pull",
                  "missing: pull an image that is not present; never: fail instead",
                  "missing",
                  "never"))
          .withDefault("missing");
  static final Setting<Long> MEMORY =
      docker(Setting.size("docker.memory", "default memory limit per sandbox (no swap); 0: none"))
          .withDefault(2L << 30);
  static final Setting<Double> CPUS =
      docker(Setting.decimal("docker.cpus", "default CPU limit per sandbox, in cores", 0));
  static final Setting<Integer> PIDS =
      docker(
              Setting.integer(
                  "docker.pids-limit", "default most processes per sandbox", 1, Integer.MAX_VALUE))
          .withDefault(1024);
  static final Setting<Long> DISK =
      docker(
          Setting.size(
              "docker.disk",
              "default workspace disk limit, where the storage driver allows; 0: none"));
  static final Setting<String> RUN_AS =
      docker(
              Setting.string("docker.run-as", "uid:gid commands run as")
                  .requiring(
                      v -> UID_GID.matcher(v).matches() && !v.startsWith("0:"),
                      "uid:gid of an unprivileged user, e.g. 1000:1000"))
          .withDefault("1000:1000");
  static final Setting<Duration> READY_TIMEOUT =
      docker(Setting.duration("docker.ready-timeout", "how long start and resume wait"))
          .withDefault(Duration.ofSeconds(60));
  static final Setting<Duration> STOP_GRACE =
      docker(Setting.duration("docker.stop-grace", "SIGTERM to SIGKILL on delete"))
          .withDefault(Duration.ofSeconds(5));
  static final Setting<String> CALLBACK_URL =
      docker(
          Setting.string(
              "docker.callback-url",
              "the control plane's URL as seen from inside sandboxes (checked at start)"));
  static final Setting<Map<String, String>> SPEC_ENV =
      Setting.family("docker.spec.env.", "every spec's environment: docker.spec.env.<NAME>");
  static final Setting<Duration> SPEC_TIMEOUT =
      Setting.duration(
          "docker.spec.timeout",
          "every spec's default lifetime of a sandbox (a create's timeout overrides it)");
  static final Setting<Duration> SPEC_IDLE_TIMEOUT =
      Setting.duration(
          "docker.spec.idle-timeout",
          "every spec's default idle timeout (a create's idle_timeout overrides it)");
  static final Setting<String> INSTANCE =
      docker(
              Setting.string(
                  "docker.instance",
                  "which control plane's containers these are (label paddock.instance)"))
          .withDefaultText("a digest of the data directory");
  static final Setting<String> RUNTIME =
      docker(
              Setting.string(
                      "docker.runtime",
                      "the OCI runtime sandboxes run under, as registered with the engine"
                          + " (runc; runsc for gVisor)")
                  .requiring(
                      v -> v.matches("[A-Za-z0-9][A-Za-z0-9_.-]*"),
                      "a runtime name from docker info's Runtimes, e.g. runc or runsc"))
          .withDefaultText("the engine's default runtime");

  static final Setting<List<String>> AGENT_SERVER_IMAGES =
      docker(
          Setting.list(
              "docker.agent-server-images",
              "images offered as specs that bring their own agent-server (OpenHands' launch"
                  + " contract)"));

  /** Every setting this backend reads. */
  static final List<Setting<?>> DECLARED =
      List.of(
          HOST,
          AGENT_JAR,
          RUNTIME_BUNDLE,
          NETWORK,
          BIND_ADDRESS,
          URL_PATTERN,
          URL_HOST,
          WORKER_PORTS,
          IMAGE,
          IMAGES,
          PULL,
          MEMORY,
          CPUS,
          PIDS,
          DISK,
          RUN_AS,
          READY_TIMEOUT,
          STOP_GRACE,
          CALLBACK_URL,
          SPEC_ENV,
          SPEC_TIMEOUT,
          SPEC_IDLE_TIMEOUT,
          INSTANCE,
          RUNTIME,
          AGENT_SERVER_IMAGES);

  DockerSettings {
    workerPorts = List.copyOf(workerPorts);
    images = List.copyOf(images);
    specEnv = Map.copyOf(specEnv);
    imageAgentImages = List.copyOf(imageAgentImages);
  }

  boolean hostNetwork() {
    return network.equals("host");
  }

  /**
   * The agent of a distribution (beside the CLI jar) or of the checkout at {@code paddock.home}, as
   * every backend finds it ({@link AgentDistribution}); empty when neither holds one, so the start
   * fails later naming the checkout's path, as before.
   */
  private static Optional<AgentDistribution> located(Settings s) {
    try {
      return Optional.of(
          AgentDistribution.locate(CommonSettings.home(s), AgentDistribution.distributionDir()));
    } catch (RuntimeStartException e) {
      return Optional.empty();
    }
  }

  /**
   * Reads the backend's settings.
   *
   * @throws dev.paddock.api.settings.SettingsException naming every invalid setting
   */
  static DockerSettings from(Map<String, String> values) {
    List<Setting<?>> declared = new ArrayList<>(DECLARED);
    declared.addAll(CommonSettings.ALL);
    Settings s = Settings.of(declared, values);
    Path agentModule = CommonSettings.home(s).resolve("paddock-agent-server");
    Path checkoutOptions = agentModule.resolve("agent-jvm.options");
    Optional<AgentDistribution> found =
        s.find(AGENT_JAR).isPresent() ? Optional.empty() : located(s);
    Optional<Path> options =
        found.isPresent()
            ? found.get().jvmOptions()
            : Optional.of(checkoutOptions).filter(Files::isRegularFile);
    Path dataDir = CommonSettings.dataDir(s);
    List<String> images = new ArrayList<>();
    images.add(s.get(IMAGE));
    s.find(IMAGES).orElse(List.of()).stream()
        .filter(image -> !images.contains(image))
        .forEach(images::add);
    return new DockerSettings(
        s.get(HOST),
        dataDir,
        s.find(AGENT_JAR)
            .or(() -> found.map(AgentDistribution::jar))
            .orElse(agentModule.resolve("target").resolve("paddock-agent-server-all.jar")),
        options,
        s.find(RUNTIME_BUNDLE),
        s.get(NETWORK),
        s.get(BIND_ADDRESS),
        s.get(URL_PATTERN),
        s.get(URL_HOST),
        s.get(WORKER_PORTS),
        images,
        s.get(PULL),
        new Resources(
            s.find(CPUS).map(OptionalDouble::of).orElse(OptionalDouble.empty()),
            limit(s.get(MEMORY)),
            OptionalInt.of(s.get(PIDS)),
            limit(s.find(DISK).orElse(0L))),
        s.get(RUN_AS),
        s.get(READY_TIMEOUT),
        s.get(STOP_GRACE),
        s.find(CALLBACK_URL),
        s.get(SPEC_ENV),
        s.find(SPEC_TIMEOUT).filter(d -> !d.isZero()),
        s.find(SPEC_IDLE_TIMEOUT).filter(d -> !d.isZero()),
        s.find(INSTANCE).orElseGet(() -> instanceOf(dataDir)),
        s.find(RUNTIME),
        s.find(AGENT_SERVER_IMAGES).orElse(List.of()));
  }

  /** The URL of a published port. */
  String url(int port) {
    return urlPattern.replace("{host}", urlHost).replace("{port}", Integer.toString(port));
  }

  /** {@code docker.x-y} is also read as the environment variable {@code PADDOCK_DOCKER_X_Y}. */
  private static <T> Setting<T> docker(Setting<T> setting) {
    String suffix = setting.name().substring("docker.".length());
    return setting.withAliases(
        "PADDOCK_DOCKER_" + suffix.toUpperCase(Locale.ROOT).replace('-', '_'));
  }

  private static OptionalLong limit(long bytes) {
    return bytes > 0 ? OptionalLong.of(bytes) : OptionalLong.empty();
  }

  private static List<Integer> ports(String text) {
    List<Integer> ports = new ArrayList<>();
    for (String word : text.split("[,\\s]+")) {
      if (word.isBlank()) {
        continue;
      }
      int port;
      try {
        port = Integer.parseInt(word);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("port numbers (1-65535) separated by commas");
      }
      if (port < 1 || port > 65535) {
        throw new IllegalArgumentException("port numbers (1-65535) separated by commas");
      }
      ports.add(port);
    }
    return List.copyOf(ports);
  }

  /** A short digest of the data directory: one control plane (or replica set) per directory. */
  static String instanceOf(Path dataDir) {
    return KeyDigest.sha256Hex(dataDir.toString()).substring(0, 12);
  }
}
