package dev.paddock.backend.process;

import dev.paddock.api.SandboxSpecService;
import dev.paddock.api.settings.Setting;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.api.spi.SandboxBackendProvider;
import java.util.List;
import java.util.Map;

/**
 * The {@code process} backend (also selected as {@code local}): each sandbox is an agent-server
 * child process of the control plane in its own directory. <strong>It isolates nothing</strong>:
 * commands run as the control plane's user and see its files and network. For development and
 * tests.
 *
 * <p>Settings (all optional):
 *
 * <ul>
 *   <li>{@code PADDOCK_DATA_DIR} ({@code paddock.data-dir}): sandboxes live in {@code
 *       <dir>/sandboxes/<id>/} (default {@code ~/.paddock})
 *   <li>{@code PADDOCK_AGENT_JAR} ({@code paddock.agent-jar}): the agent-server jar; default the
 *       one beside the CLI jar, else the checkout's under {@code paddock.home}
 *   <li>{@code paddock.home}: the repository root holding the built agent-server (default the
 *       working directory)
 *   <li>{@code agent.command}: the argv prefix that runs the agent, shell-style words; default this
 *       JVM's {@code java}, {@code agent-jvm.options}, the matching AOT cache, the shaded jar
 *   <li>{@code process.ready-timeout} (30s), {@code process.stop-grace} (5s), {@code
 *       process.alive-timeout} (1s)
 *   <li>{@code process.freezer}: {@code auto}, {@code cgroup-v1}, {@code cgroup-v2}, {@code
 *       signals}
 *   <li>{@code process.path}, {@code process.lang}: the agent's PATH and LANG
 *   <li>{@code process.log-max-bytes}: cap of each sandbox's {@code agent.log} (1 MiB)
 *   <li>{@code process.spec.id}, {@code process.spec.env.<NAME>}: the one spec
 *   <li>{@code process.memory}, {@code process.cpus}, {@code process.pids-limit}: the spec's limits
 *       (none by default), enforced through cgroups where the host allows
 *   <li>{@code process.confine-files}: the agent's file routes only inside the workspace (default
 *       false)
 * </ul>
 */
public final class ProcessBackendProvider implements SandboxBackendProvider {
  /** For {@link java.util.ServiceLoader}. */
  public ProcessBackendProvider() {}

  /**
   * An {@code agent.command} setting that runs the agent-server from this JVM's own class path with
   * the agent's start-up options: for embedding Paddock, and for tests, which need no shaded jar.
   */
  public static String classPathAgentCommand() {
    return java.nio.file.Path.of(System.getProperty("java.home"), "bin", "java")
        + " -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -Xmx64m -XX:-UsePerfData -Xshare:auto"
        + " -cp '"
        + System.getProperty("java.class.path")
        + "' dev.paddock.agent.AgentServerMain";
  }

  @Override
  public List<String> names() {
    return List.of("process", "local");
  }

  @Override
  public List<Setting<?>> settings() {
    return ProcessSettings.DECLARED;
  }

  /**
   * @throws IllegalArgumentException on a malformed setting, or a forced freezer this host lacks
   */
  @Override
  public SandboxBackend create(Map<String, String> settings) {
    return ProcessBackend.create(ProcessSettings.from(settings), ProcessLauncher.system());
  }

  @Override
  public SandboxSpecService specs(Map<String, String> settings) {
    return new ProcessSpecService(ProcessSettings.from(settings));
  }
}
