package dev.paddock.cli;

import dev.paddock.api.settings.CommonSettings;
import dev.paddock.api.settings.SettingSource;
import dev.paddock.api.settings.Settings;
import dev.paddock.backend.kit.AgentDistribution;
import dev.paddock.backend.kit.RuntimeBundle;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code paddock runtime-bundle}: builds (or finds, when already built) the agent's runtime bundle
 * the Docker and SSH backends mount or copy, and the agent image carries, and prints its directory.
 * The agent comes from where every backend finds it ({@link AgentDistribution}: {@code
 * PADDOCK_AGENT_JAR}, else beside the CLI jar, else the checkout). Needs a JDK (jlink).
 */
@Command(
    mixinStandardHelpOptions = true,
    name = "runtime-bundle",
    description =
        "Build the agent's runtime bundle (a jlink JRE, the agent jar, its entry script) and print"
            + " its directory.")
final class RuntimeBundleCommand implements Callable<Integer> {
  @Spec CommandSpec spec;

  @Option(
      names = "--cache",
      paramLabel = "DIR",
      description = "where bundles are kept (default: <data dir>/runtime, as the backends do)")
  Optional<Path> cache = Optional.empty();

  private final Map<String, String> environment;

  RuntimeBundleCommand(Map<String, String> environment) {
    this.environment = Map.copyOf(environment);
  }

  @Override
  public Integer call() {
    Map<String, String> launcher = new HashMap<>();
    Optional.ofNullable(System.getProperty("paddock.home"))
        .ifPresent(home -> launcher.put(CommonSettings.HOME.name(), home));
    Settings settings =
        Settings.builder()
            .declare(AgentDistribution.SETTINGS)
            .source(SettingSource.ENV, environment)
            .source(SettingSource.FLAG, launcher)
            .build();
    Path dir = cache.orElseGet(() -> CommonSettings.dataDir(settings).resolve("runtime"));
    Path bundle = RuntimeBundle.ensure(dir, AgentDistribution.locate(settings));
    spec.commandLine().getOut().println(bundle);
    spec.commandLine().getOut().flush();
    return 0;
  }
}
