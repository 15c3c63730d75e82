package dev.paddock.backend.process;

import dev.paddock.api.spi.RuntimeStartException;
import dev.paddock.backend.kit.AgentDistribution;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * The argv prefix that runs an agent-server; the backend appends its own options ({@code --host},
 * {@code --port}, {@code --workspace}, {@code --events-dir}, {@code --secrets-stdin}).
 *
 * <p>The default is the kit's {@link AgentDistribution#command}: the JDK running the control plane,
 * the agent's JVM options and the AOT cache trained for it on this JDK, and the agent jar found
 * through {@code PADDOCK_AGENT_JAR}, a distribution beside the CLI jar, or the checkout at {@code
 * paddock.home}.
 */
final class AgentCommand {
  private AgentCommand() {}

  /**
   * The configured prefix, else the default one.
   *
   * @throws RuntimeStartException BINARY_MISSING when no agent jar or no java is found
   */
  static List<String> resolve(ProcessSettings settings) {
    if (!settings.agentCommand().isEmpty()) {
      return settings.agentCommand();
    }
    AgentDistribution agent =
        settings
            .agentJar()
            .map(AgentDistribution::at)
            .orElseGet(
                () ->
                    AgentDistribution.locate(settings.home(), AgentDistribution.distributionDir()));
    return agent.command(Path.of(System.getProperty("java.home")));
  }

  /** The launcher-equivalent command of the checkout at {@code home} (no distribution). */
  static List<String> defaultCommand(Path home, Path javaHome) {
    return AgentDistribution.locate(home, Optional.empty()).command(javaHome);
  }
}
