package dev.paddock.backend.process;

import dev.paddock.api.Resources;
import dev.paddock.api.settings.CommonSettings;
import dev.paddock.api.settings.Setting;
import dev.paddock.api.settings.Settings;
import dev.paddock.backend.kit.AgentDistribution;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * The process backend's settings, declared in {@link #DECLARED} and read once from the control
 * plane's flattened settings map.
 *
 * @param home the Paddock repository root ({@code paddock.home}, default the working directory):
 *     where the default agent command finds the shaded jar, its JVM options and AOT cache
 * @param agentJar an explicit agent jar ({@code PADDOCK_AGENT_JAR}, {@code paddock.agent-jar});
 *     empty: beside the CLI jar, else under {@code home}
 * @param dataDir the data directory ({@code PADDOCK_DATA_DIR}, default {@code ~/.paddock}); each
 *     sandbox lives in {@code <dataDir>/sandboxes/<id>/}
 * @param agentCommand argv prefix that runs the agent-server ({@code agent.command}, shell-style
 *     words); empty for the default (this JVM's java, agent-jvm.options, AOT cache, shaded jar)
 * @param readyTimeout how long start and resume wait for the agent ({@code process.ready-timeout},
 *     default 30 s)
 * @param stopGrace SIGTERM to SIGKILL on destroy ({@code process.stop-grace}, default 5 s)
 * @param freezer {@code auto} (default), {@code cgroup-v1}, {@code cgroup-v2} or {@code signals}
 *     ({@code process.freezer})
 * @param path the agent's {@code PATH} ({@code process.path})
 * @param lang the agent's {@code LANG} ({@code process.lang}, default {@code C.UTF-8})
 * @param logMaxBytes most bytes kept in {@code agent.log} ({@code process.log-max-bytes}, 1 MiB)
 * @param aliveTimeout connect and read timeout of {@code GET /alive} ({@code
 *     process.alive-timeout}, default 1 s)
 * @param specId the id of the one spec ({@code process.spec.id}, default {@code process-default})
 * @param specEnv the spec's initial environment ({@code process.spec.env.<NAME>} settings)
 * @param specResources the spec's limits ({@code process.memory}, {@code process.cpus}, {@code
 *     process.pids-limit}; default none), applied through cgroups where the host allows
 * @param specTimeout the spec's default lifetime ({@code process.spec.timeout}; default: the
 *     operator's {@code PADDOCK_DEFAULT_TIMEOUT})
 * @param specIdleTimeout the spec's default idle timeout ({@code process.spec.idle-timeout})
 * @param sandboxesRoot where sandbox directories live ({@code process.sandboxes-dir}); empty:
 *     {@code <dataDir>/sandboxes}. Control-plane replicas on one host that serve the same sandboxes
 *     set it to the same directory (each keeps its own data dir).
 * @param confineFiles the agent's file routes only inside the sandbox's workspace ({@code
 *     process.confine-files}, default false: wherever the control plane's user may go, since this
 *     backend isolates nothing else either)
 */
record ProcessSettings(
    Path home,
    Optional<Path> agentJar,
    Path dataDir,
    List<String> agentCommand,
    Duration readyTimeout,
    Duration stopGrace,
    String freezer,
    String path,
    String lang,
    long logMaxBytes,
    Duration aliveTimeout,
    String specId,
    Map<String, String> specEnv,
    Resources specResources,
    Optional<Duration> specTimeout,
    Optional<Duration> specIdleTimeout,
    Optional<Path> sandboxesRoot,
    boolean confineFiles) {

  static final String DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

  static final Setting<List<String>> AGENT_COMMAND =
      Setting.of(
              "agent.command",
              "the argv prefix that runs the agent-server",
              "shell-style words",
              CommandLine::split)
          .withDefaultText("this JVM's java with agent-jvm.options, the AOT cache and the jar");
  static final Setting<Duration> READY_TIMEOUT =
      Setting.duration("process.ready-timeout", "how long start and resume wait for the agent")
          .withDefault(Duration.ofSeconds(30));
  static final Setting<Duration> STOP_GRACE =
      Setting.duration("process.stop-grace", "SIGTERM to SIGKILL on delete")
          .withDefault(Duration.ofSeconds(5));
  static final Setting<String> FREEZER =
      Setting.oneOf(
              "process.freezer",
              "how sandboxes are frozen on pause",
              "auto",
              "cgroup-v1",
              "cgroup-v2",
              "signals")
          .withDefault("auto");
  static final Setting<String> PATH =
      Setting.string("process.path", "the agent's PATH").withDefault(DEFAULT_PATH);
  static final Setting<String> LANG =
      Setting.string("process.lang", "the agent's LANG").withDefault("C.UTF-8");
  static final Setting<Long> LOG_MAX_BYTES =
      Setting.size("process.log-max-bytes", "most bytes kept of each sandbox's agent.log")
          .withDefault(1L << 20);
  static final Setting<Duration> ALIVE_TIMEOUT =
      Setting.duration("process.alive-timeout", "connect and read timeout of GET /alive")
          .withDefault(Duration.ofSeconds(1));
  static final Setting<String> SPEC_ID =
      Setting.string("process.spec.id", "the id of the one spec").withDefault("process-default");
  static final Setting<Map<String, String>> SPEC_ENV =
      Setting.family("process.spec.env.", "the spec's environment: process.spec.env.<NAME>");
  static final Setting<Duration> SPEC_TIMEOUT =
      Setting.duration(
          "process.spec.timeout",
          "the spec's default lifetime of a sandbox (a create's timeout overrides it)");
  static final Setting<Duration> SPEC_IDLE_TIMEOUT =
      Setting.duration(
          "process.spec.idle-timeout",
          "the spec's default idle timeout (a create's idle_timeout overrides it)");
  static final Setting<Long> MEMORY =
      Setting.size(
          "process.memory", "the spec's memory limit (through the memory cgroup); 0: none");
  static final Setting<Double> CPUS =
      Setting.decimal("process.cpus", "the spec's CPU limit in cores (through the cpu cgroup)", 0);
  static final Setting<Integer> PIDS =
      Setting.integer(
          "process.pids-limit",
          "the spec's most processes and threads, the agent's included (through the pids cgroup)",
          1,
          Integer.MAX_VALUE);

  static final Setting<Path> SANDBOXES_DIR =
      Setting.path(
          "process.sandboxes-dir",
          "where sandbox directories live (default <data dir>/sandboxes); replicas on one host"
              + " serving the same sandboxes share it");

  static final Setting<Boolean> CONFINE_FILES =
      Setting.bool(
              "process.confine-files",
              "the agent's file routes only inside the sandbox's workspace (its --file-root)")
          .withDefault(false);

  /** Every setting this backend reads. */
  static final List<Setting<?>> DECLARED =
      List.of(
          AgentDistribution.AGENT_JAR,
          AGENT_COMMAND,
          READY_TIMEOUT,
          STOP_GRACE,
          FREEZER,
          PATH,
          LANG,
          LOG_MAX_BYTES,
          ALIVE_TIMEOUT,
          SPEC_ID,
          SPEC_ENV,
          SPEC_TIMEOUT,
          SPEC_IDLE_TIMEOUT,
          MEMORY,
          CPUS,
          PIDS,
          SANDBOXES_DIR,
          CONFINE_FILES);

  ProcessSettings {
    agentCommand = List.copyOf(agentCommand);
    specEnv = Map.copyOf(specEnv);
  }

  /**
   * Reads the backend's settings.
   *
   * @throws dev.paddock.api.settings.SettingsException naming every invalid setting
   */
  static ProcessSettings from(Map<String, String> values) {
    List<Setting<?>> declared = new ArrayList<>(DECLARED);
    declared.addAll(CommonSettings.ALL);
    Settings s = Settings.of(declared, values);
    return new ProcessSettings(
        CommonSettings.home(s),
        s.find(AgentDistribution.AGENT_JAR),
        CommonSettings.dataDir(s),
        s.find(AGENT_COMMAND).orElse(List.of()),
        s.get(READY_TIMEOUT),
        s.get(STOP_GRACE),
        s.get(FREEZER),
        s.get(PATH),
        s.get(LANG),
        s.get(LOG_MAX_BYTES),
        s.get(ALIVE_TIMEOUT),
        s.get(SPEC_ID),
        s.get(SPEC_ENV),
        new Resources(
            s.find(CPUS).map(OptionalDouble::of).orElse(OptionalDouble.empty()),
            s.find(MEMORY).filter(b -> b > 0).map(OptionalLong::of).orElse(OptionalLong.empty()),
            s.find(PIDS).map(OptionalInt::of).orElse(OptionalInt.empty()),
            OptionalLong.empty()),
        s.find(SPEC_TIMEOUT).filter(d -> !d.isZero()),
        s.find(SPEC_IDLE_TIMEOUT).filter(d -> !d.isZero()),
        s.find(SANDBOXES_DIR),
        s.get(CONFINE_FILES));
  }

  /** {@code process.sandboxes-dir}, else {@code <dataDir>/sandboxes}: one directory per sandbox. */
  Path sandboxesDir() {
    return sandboxesRoot.orElseGet(() -> dataDir.resolve("sandboxes"));
  }
}
