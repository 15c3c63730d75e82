package dev.paddock.backend.ssh;

import dev.paddock.api.Resources;
import dev.paddock.api.settings.CommonSettings;
import dev.paddock.api.settings.Setting;
import dev.paddock.api.settings.Settings;
import dev.paddock.backend.kit.AgentDistribution;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * The SSH backend's settings, each {@code ssh.x-y} also read as {@code PADDOCK_SSH_X_Y}.
 *
 * @param hosts the sandbox hosts ({@code ssh.hosts}, required)
 * @param keyFile the private key the control plane logs in with ({@code ssh.key-file}, required)
 * @param knownHosts the {@code known_hosts} file every host key must be in ({@code
 *     ssh.known-hosts}, required; strict checking, never learnt on first use)
 * @param remoteDir where sandboxes and bundles live on each host, relative to the login's home
 *     unless absolute ({@code ssh.remote-dir}, default {@code .paddock-ssh})
 * @param sshBinary the OpenSSH client ({@code ssh.binary}, default {@code ssh})
 * @param connectTimeout TCP connect and authentication deadline ({@code ssh.connect-timeout}, 10 s)
 * @param readyTimeout how long start and resume wait for the agent ({@code ssh.ready-timeout}, 60
 *     s)
 * @param stopGrace SIGTERM to SIGKILL on delete ({@code ssh.stop-grace}, 5 s)
 * @param minFreeDisk the least free space a host must have to take a sandbox ({@code
 *     ssh.min-free-disk}, 256 MiB); less is the DISK_FULL start failure
 * @param agentSettings what locates the agent-server that goes into the runtime bundle ({@code
 *     PADDOCK_AGENT_JAR}, else the distribution or checkout: {@link AgentDistribution})
 * @param bundleCache where the runtime bundle is built ({@code <data dir>/runtime-ssh})
 * @param specId the id of the one spec ({@code ssh.spec.id}, default {@code ssh-default})
 * @param specEnv the spec's environment ({@code ssh.spec.env.<NAME>})
 * @param specResources the spec's limits ({@code ssh.memory}, {@code ssh.cpus}, {@code
 *     ssh.pids-limit}), enforced through a cgroup on hosts that let the login create one
 */
record SshSettings(
    List<SshTarget> hosts,
    Path keyFile,
    Path knownHosts,
    String remoteDir,
    String sshBinary,
    Duration connectTimeout,
    Duration readyTimeout,
    Duration stopGrace,
    long minFreeDisk,
    Settings agentSettings,
    Path bundleCache,
    String specId,
    Map<String, String> specEnv,
    Resources specResources) {
  static final Setting<List<SshTarget>> HOSTS =
      ssh(
          Setting.of(
              "ssh.hosts",
              "sandbox hosts, comma-separated",
              "[user@]host[:port], comma-separated, e.g. paddock@gpu1,paddock@10.0.0.7:2222",
              SshSettings::targets));
  static final Setting<Path> KEY_FILE =
      ssh(readable(Setting.path("ssh.key-file", "the private key the control plane logs in with")));
  static final Setting<Path> KNOWN_HOSTS =
      ssh(readable(Setting.path("ssh.known-hosts", "known_hosts with every host's key (strict)")));
  static final Setting<String> REMOTE_DIR =
      ssh(Setting.string("ssh.remote-dir", "sandboxes' directory on each host (relative: to home)"))
          .withDefault(".paddock-ssh");
  static final Setting<String> BINARY =
      ssh(Setting.string("ssh.binary", "the OpenSSH client")).withDefault("ssh");
  static final Setting<Duration> CONNECT_TIMEOUT =
      ssh(Setting.duration("ssh.connect-timeout", "connect and log-in deadline per host"))
          .withDefault(Duration.ofSeconds(10));
  static final Setting<Duration> READY_TIMEOUT =
      ssh(Setting.duration("ssh.ready-timeout", "how long start and resume wait for the agent"))
          .withDefault(Duration.ofSeconds(60));
  static final Setting<Duration> STOP_GRACE =
      ssh(Setting.duration("ssh.stop-grace", "SIGTERM to SIGKILL on delete"))
          .withDefault(Duration.ofSeconds(5));
  static final Setting<Long> MIN_FREE_DISK =
      ssh(Setting.size("ssh.min-free-disk", "least free disk a host needs to take a sandbox"))
          .withDefault(256L << 20);
  static final Setting<String> SPEC_ID =
      ssh(Setting.string("ssh.spec.id", "the id of the one spec")).withDefault("ssh-default");
  static final Setting<Map<String, String>> SPEC_ENV =
      Setting.family("ssh.spec.env.", "the spec's environment: ssh.spec.env.<NAME>");
  static final Setting<Long> MEMORY =
      ssh(Setting.size("ssh.memory", "the spec's memory limit (host cgroup v2); 0: none"));
  static final Setting<Double> CPUS =
      ssh(Setting.decimal("ssh.cpus", "the spec's CPU limit in cores (host cgroup v2)", 0));
  static final Setting<Integer> PIDS =
      ssh(
          Setting.integer(
              "ssh.pids-limit",
              "the spec's most processes (host cgroup v2)",
              1,
              Integer.MAX_VALUE));

  /** Every setting this backend reads. */
  static final List<Setting<?>> DECLARED =
      List.of(
          HOSTS,
          KEY_FILE,
          KNOWN_HOSTS,
          REMOTE_DIR,
          BINARY,
          CONNECT_TIMEOUT,
          READY_TIMEOUT,
          STOP_GRACE,
          MIN_FREE_DISK,
          SPEC_ID,
          SPEC_ENV,
          MEMORY,
          CPUS,
          PIDS);

  SshSettings {
    hosts = List.copyOf(hosts);
    specEnv = Map.copyOf(specEnv);
  }

  /**
   * Reads and checks the settings.
   *
   * @throws IllegalArgumentException (a {@link dev.paddock.api.settings.SettingsException} for a
   *     malformed value) naming the setting that is missing or wrong
   */
  static SshSettings from(Map<String, String> values) {
    List<Setting<?>> declared = new ArrayList<>(DECLARED);
    declared.addAll(CommonSettings.ALL);
    declared.add(AgentDistribution.AGENT_JAR);
    Settings s = Settings.of(declared, values);
    return new SshSettings(
        hosts(s),
        readableFile(s, KEY_FILE),
        readableFile(s, KNOWN_HOSTS),
        s.get(REMOTE_DIR),
        s.get(BINARY),
        s.get(CONNECT_TIMEOUT),
        s.get(READY_TIMEOUT),
        s.get(STOP_GRACE),
        s.get(MIN_FREE_DISK),
        s,
        CommonSettings.dataDir(s).resolve("runtime-ssh"),
        s.get(SPEC_ID),
        s.get(SPEC_ENV),
        new Resources(
            s.find(CPUS).map(OptionalDouble::of).orElse(OptionalDouble.empty()),
            s.find(MEMORY).filter(b -> b > 0).map(OptionalLong::of).orElse(OptionalLong.empty()),
            s.find(PIDS).map(OptionalInt::of).orElse(OptionalInt.empty()),
            OptionalLong.empty()));
  }

  /**
   * The agent-server to bundle, located on first use (a control plane may start before it is
   * built).
   *
   * @throws dev.paddock.api.spi.RuntimeStartException BINARY_MISSING naming where it looked
   */
  AgentDistribution agent() {
    return AgentDistribution.locate(agentSettings);
  }

  private static List<SshTarget> hosts(Settings s) {
    List<SshTarget> hosts = s.find(HOSTS).orElse(List.of());
    if (hosts.isEmpty()) {
      throw required(HOSTS, "the hosts sandboxes run on, e.g. paddock@gpu1");
    }
    return hosts;
  }

  private static List<SshTarget> targets(String text) {
    String user = System.getProperty("user.name");
    return Arrays.stream(text.split("[,\\s]+"))
        .filter(word -> !word.isBlank())
        .map(word -> SshTarget.parse(word, user))
        .toList();
  }

  private static Path readableFile(Settings s, Setting<Path> setting) {
    return s.find(setting).orElseThrow(() -> required(setting, "a readable file"));
  }

  private static Setting<Path> readable(Setting<Path> setting) {
    return setting.requiring(
        file -> Files.isRegularFile(file) && Files.isReadable(file), "a readable file");
  }

  private static IllegalArgumentException required(Setting<?> setting, String what) {
    return new IllegalArgumentException(
        setting.name()
            + " ("
            + String.join(", ", setting.aliases())
            + ") is required by RUNTIME=ssh: "
            + what);
  }

  /** {@code ssh.x-y} is also read as the environment variable {@code PADDOCK_SSH_X_Y}. */
  private static <T> Setting<T> ssh(Setting<T> setting) {
    String suffix = setting.name().substring("ssh.".length());
    return setting.withAliases("PADDOCK_SSH_" + suffix.toUpperCase(Locale.ROOT).replace('-', '_'));
  }
}
