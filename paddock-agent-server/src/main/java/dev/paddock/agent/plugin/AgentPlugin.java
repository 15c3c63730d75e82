package dev.paddock.agent.plugin;

/**
 * An integrator's extension of the agent-server: custom actions served under {@code
 * /api/plugins/<name>/...}. Implementations are found with {@link java.util.ServiceLoader} in the
 * jars of the agent's plugin directory ({@code --plugin-path DIR}: a {@code
 * META-INF/services/dev.paddock.agent.plugin.AgentPlugin} file naming the class, which needs a
 * public no-argument constructor).
 *
 * <p>Routes a plugin registers get what every {@code /api} route gets: the session-key check (401
 * without it), idle tracking and JSON error replies. Paths from clients must go through {@link
 * PluginContext#resolve}, and processes through {@link PluginContext#process}, so the plugin keeps
 * to the file roots and runs code as the command user, never as the agent.
 *
 * <p>Lifecycle: {@link #start} once, before the agent serves; {@link #stop} once, when it stops.
 * Routes run on request threads (virtual), so a plugin must be thread-safe.
 */
public interface AgentPlugin {
  /**
   * The plugin's name, its routes' prefix: 1-64 lower-case letters, digits or '-', unique among the
   * loaded plugins.
   */
  String name();

  /** Registers routes and prepares state; an exception here stops the agent from starting. */
  void start(PluginContext context) throws Exception;

  /** Releases what {@link #start} took. The default does nothing. */
  default void stop() throws Exception {}
}
