package dev.paddock.backend.process;

import dev.paddock.api.spi.SettingValues;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * The process backend's settings, read once from the control plane's flattened settings map.
 * Durations are written {@code 500ms}, {@code 5s}, {@code 2m} or ISO-8601 ({@code PT5S}).
 *
 * @param home the Paddock repository root ({@code paddock.home}, default the working directory):
 *     where the default agent command finds the shaded jar, its JVM options and AOT cache
 * @param dataDir the data directory ({@code paddock.data-dir}, default {@code ~/.paddock}); each
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
 */
record ProcessSettings(
    Path home,
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
    Map<String, String> specEnv) {

  static final String DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
  private static final String SPEC_ENV_PREFIX = "process.spec.env.";

  ProcessSettings {
    agentCommand = List.copyOf(agentCommand);
    specEnv = Map.copyOf(specEnv);
  }

  static ProcessSettings from(Map<String, String> settings) {
    return new ProcessSettings(
        Path.of(settings.getOrDefault("paddock.home", ".")).toAbsolutePath().normalize(),
        dataDir(settings),
        Optional.ofNullable(settings.get("agent.command"))
            .map(CommandLine::split)
            .orElse(List.of()),
        duration(settings, "process.ready-timeout", Duration.ofSeconds(30)),
        duration(settings, "process.stop-grace", Duration.ofSeconds(5)),
        settings.getOrDefault("process.freezer", "auto").trim().toLowerCase(Locale.ROOT),
        settings.getOrDefault("process.path", DEFAULT_PATH),
        settings.getOrDefault("process.lang", "C.UTF-8"),
        Long.parseLong(settings.getOrDefault("process.log-max-bytes", "1048576").trim()),
        duration(settings, "process.alive-timeout", Duration.ofSeconds(1)),
        settings.getOrDefault("process.spec.id", "process-default"),
        specEnv(settings));
  }

  /** {@code <dataDir>/sandboxes}: one directory per sandbox. */
  Path sandboxesDir() {
    return dataDir.resolve("sandboxes");
  }

  private static Path dataDir(Map<String, String> settings) {
    return SettingValues.dataDir(settings);
  }

  private static Map<String, String> specEnv(Map<String, String> settings) {
    return SettingValues.withPrefix(settings, SPEC_ENV_PREFIX);
  }

  static Duration duration(Map<String, String> settings, String key, Duration fallback) {
    return SettingValues.duration(key, settings.get(key), fallback);
  }
}
