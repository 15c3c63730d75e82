package dev.paddock.agent.plugin;

import dev.paddock.agent.files.SafeFs;
import dev.paddock.agent.user.CommandUser;
import dev.paddock.http.Router;
import java.io.IOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The plugins loaded from a plugin directory: one class loader over its jars (the agent's own
 * classes as parent, so plugins share the agent's API types), providers of {@link AgentPlugin}
 * defined by that loader only. Started in name order; closed in reverse.
 */
public final class Plugins implements AutoCloseable {
  static final String ROOT = "/api/plugins/";
  private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9-]{0,63}");

  private final List<AgentPlugin> started;
  private final Optional<URLClassLoader> loader;

  private Plugins(List<AgentPlugin> started, Optional<URLClassLoader> loader) {
    this.started = started;
    this.loader = loader;
  }

  /** No plugins. */
  public static Plugins none() {
    return new Plugins(new ArrayList<>(), Optional.empty());
  }

  /**
   * Loads the jars in {@code directory} and starts every plugin in them, registering its routes on
   * {@code router}.
   *
   * @throws PluginException when the directory cannot be read, a name is invalid or taken, or a
   *     plugin fails to start (those started already are closed)
   */
  public static Plugins start(
      Path directory,
      Router router,
      SafeFs fs,
      CommandUser user,
      Path workspace,
      Map<String, String> environment) {
    URLClassLoader loader = new URLClassLoader(jars(directory), Plugins.class.getClassLoader());
    Plugins plugins = new Plugins(new ArrayList<>(), Optional.of(loader));
    try {
      Set<String> names = new HashSet<>();
      for (AgentPlugin plugin : discover(loader)) {
        String name = checkName(plugin, names);
        plugin.start(new Context(name, router, fs, user, workspace, environment));
        plugins.started.add(plugin);
      }
      return plugins;
    } catch (Exception | LinkageError e) {
      plugins.close();
      throw e instanceof PluginException p
          ? p
          : new PluginException("a plugin in " + directory + " failed to start: " + e, e);
    }
  }

  private static URL[] jars(Path directory) {
    try (Stream<Path> entries = Files.list(directory)) {
      List<URL> urls = new ArrayList<>();
      for (Path jar : entries.filter(p -> p.toString().endsWith(".jar")).sorted().toList()) {
        urls.add(jar.toUri().toURL());
      }
      return urls.toArray(URL[]::new);
    } catch (MalformedURLException e) {
      throw new PluginException("bad plugin jar path in " + directory + ": " + e.getMessage(), e);
    } catch (IOException e) {
      throw new PluginException("cannot read the plugin directory " + directory + ": " + e, e);
    }
  }

  /** Providers defined by the plugin loader itself, not ones the agent's class path offers. */
  private static List<AgentPlugin> discover(URLClassLoader loader) {
    try {
      return ServiceLoader.load(AgentPlugin.class, loader).stream()
          .filter(p -> p.type().getClassLoader() == loader)
          .map(ServiceLoader.Provider::get)
          .sorted(java.util.Comparator.comparing(AgentPlugin::name))
          .toList();
    } catch (java.util.ServiceConfigurationError e) {
      throw new PluginException("cannot load a plugin: " + e.getMessage(), e);
    }
  }

  private static String checkName(AgentPlugin plugin, Set<String> taken) {
    String name = plugin.name();
    if (name == null || !NAME.matcher(name).matches()) {
      throw new PluginException(
          "plugin "
              + plugin.getClass().getName()
              + " has an invalid name '"
              + name
              + "': 1-64 lower-case letters, digits or '-'");
    }
    if (!taken.add(name)) {
      throw new PluginException("two plugins are named '" + name + "'");
    }
    return name;
  }

  /** The names of the started plugins, in start order. */
  public List<String> names() {
    return started.stream().map(AgentPlugin::name).toList();
  }

  @Override
  public void close() {
    List<AgentPlugin> reverse = new ArrayList<>(started);
    java.util.Collections.reverse(reverse);
    for (AgentPlugin plugin : reverse) {
      try {
        plugin.stop();
      } catch (Exception e) {
        System.err.println(
            "paddock agent-server: plugin " + plugin.name() + " failed to stop: " + e);
      }
    }
    started.clear();
    loader.ifPresent(
        l -> {
          try {
            l.close();
          } catch (IOException e) {
            // The jars stay open until exit; nothing else to do.
          }
        });
  }

  /** One plugin's view of the agent. */
  private record Context(
      String name,
      Router router,
      SafeFs fs,
      CommandUser user,
      Path workspace,
      Map<String, String> environment)
      implements PluginContext {
    @Override
    public void route(String method, String subpath, Router.Route route) {
      String sub = subpath.startsWith("/") ? subpath.substring(1) : subpath;
      if (sub.isEmpty() || sub.contains("//") || sub.contains("..")) {
        throw new IllegalArgumentException("bad plugin route subpath '" + subpath + "'");
      }
      router.add(method, ROOT + name + "/" + sub, route);
    }

    @Override
    public Path resolve(String clientPath) throws IOException {
      return fs.realPath(clientPath);
    }

    @Override
    public ProcessBuilder process(List<String> argv) {
      ProcessBuilder builder = new ProcessBuilder(user.wrap(argv)).directory(workspace.toFile());
      builder.environment().clear();
      builder.environment().putAll(environment);
      return builder;
    }

    @Override
    public Map<String, String> environment() {
      return new LinkedHashMap<>(environment);
    }
  }
}
