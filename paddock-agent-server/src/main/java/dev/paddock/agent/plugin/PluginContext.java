package dev.paddock.agent.plugin;

import dev.paddock.http.Router;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** What the agent gives a plugin in {@link AgentPlugin#start}. Thread-safe. */
public interface PluginContext {
  /**
   * Serves {@code method} on {@code /api/plugins/<name>/<subpath>}; {@code subpath} may hold {@code
   * {param}} segments, read with {@code call.pathParam}.
   *
   * @throws IllegalArgumentException for an empty subpath or one with {@code ..} or {@code //}
   */
  void route(String method, String subpath, Router.Route route);

  /**
   * The real path a client-supplied absolute path names, checked against the agent's file roots by
   * the file routes' race-free walk ({@code dev.paddock.agent.files.SafeFs#realPath}: links
   * followed within the roots; the path may not exist yet); throws {@link
   * dev.paddock.http.HttpError} 400 (bad path), 403 (outside the roots) or 409 (changed while being
   * resolved), which the route answers as is.
   *
   * <p>The check is race-free; the plugin's own I/O on the returned path is not: it is resolved
   * again by the kernel when the plugin opens it, so code in the sandbox could swap a directory on
   * the way for a link meanwhile. A plugin that must not be redirected runs its I/O as the command
   * user ({@link #process}), who can reach only what the sandbox could anyway.
   */
  Path resolve(String clientPath) throws IOException;

  /** The agent's workspace (the default working directory of commands). */
  Path workspace();

  /**
   * A process builder for {@code argv} that runs as the command user ({@code --run-as}, with no
   * capabilities), with the commands' environment (no keys) and the workspace as its directory. The
   * caller may change the directory and add variables; it must not clear the user switch.
   */
  ProcessBuilder process(List<String> argv);

  /** The environment commands get (no keys); a copy. */
  Map<String, String> environment();
}
