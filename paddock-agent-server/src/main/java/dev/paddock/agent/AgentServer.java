package dev.paddock.agent;

import com.sun.net.httpserver.HttpServer;
import dev.paddock.agent.bash.BashRoutes;
import dev.paddock.agent.bash.BashService;
import dev.paddock.agent.core.AgentConfig;
import dev.paddock.agent.edit.EditRoutes;
import dev.paddock.agent.files.FileRoutes;
import dev.paddock.agent.files.SafeFs;
import dev.paddock.agent.git.GitRoutes;
import dev.paddock.agent.plugin.PluginException;
import dev.paddock.agent.plugin.Plugins;
import dev.paddock.agent.pty.TerminalRoutes;
import dev.paddock.agent.pty.TerminalService;
import dev.paddock.agent.search.SearchRoutes;
import dev.paddock.agent.user.CommandUser;
import dev.paddock.agent.user.CommandUserException;
import dev.paddock.agent.watch.WatchRoutes;
import dev.paddock.backend.kit.protocol.AgentProtocol;
import dev.paddock.http.Call;
import dev.paddock.http.HttpError;
import dev.paddock.http.HttpServerConfig;
import dev.paddock.http.HttpServers;
import dev.paddock.http.JsonBody;
import dev.paddock.http.Router;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The agent-server: the HTTP data plane inside a sandbox. Start with {@link #start(AgentConfig)},
 * stop with {@link #close()}, which also stops every command it started. Request handlers run on
 * virtual threads; see docs/CONCURRENCY.md for the other threads.
 */
public final class AgentServer implements AutoCloseable {
  /** Header carrying a session key on every {@code /api} request. */
  public static final String SESSION_KEY_HEADER = AgentProtocol.SESSION_KEY_HEADER;

  /** Header carrying the admin secret on the admin routes. */
  public static final String ADMIN_KEY_HEADER = AgentProtocol.ADMIN_KEY_HEADER;

  /** An {@code /api} route the admin key also opens (see {@link #isAdminRead}). */
  public static final String ARCHIVE_ROUTE = AgentProtocol.ARCHIVE;

  /** The other {@code /api} route the admin key opens: the read-only environment probe. */
  public static final String ENVIRONMENT_ROUTE = EnvironmentProbe.ROUTE;

  /** The variable through which commands learn their agent's URL. */
  public static final String AGENT_URL_VARIABLE = "PADDOCK_AGENT_URL";

  private static final System.Logger LOG = System.getLogger("paddock.agent");

  private final AgentConfig config;
  private final HttpServer http;
  private final ExecutorService handlers;
  private final BashService bash;
  private final TerminalService terminals;
  private Plugins plugins = Plugins.none();
  private Router router;
  private final long startedNanos = System.nanoTime();
  private final Activity activity = new Activity(this::working);
  private final boolean open;
  private volatile boolean ready;

  private final CommandUser user;

  private AgentServer(
      AgentConfig config, CommandUser user, HttpServer http, ExecutorService handlers) {
    this.config = config;
    this.user = user;
    this.http = http;
    this.handlers = handlers;
    this.bash =
        new BashService(
            config, user, agentVariables(config, http.getAddress().getPort()), activity::touch);
    this.terminals =
        new TerminalService(
            config.workspace(), user, bash.environment(), config.killGrace(), activity::touch);
    // Open only when started with no keys at all; a ring emptied by rotation accepts nothing.
    this.open = config.sessionKeys().isEmpty() && config.adminKeys().isEmpty();
  }

  /**
   * Prepares the command user ({@link AgentConfig#runAs()}), binds, registers routes, and serves;
   * {@code /ready} answers 200 once this returns.
   *
   * @throws CommandUserException when commands cannot run as the configured user
   * @throws PluginException when a plugin of {@link AgentConfig#pluginPath()} cannot start
   */
  public static AgentServer start(AgentConfig config) {
    createWorkspace(config.workspace());
    CommandUser user = CommandUser.prepare(config.runAs(), config.home(), config.workspace());
    HttpServer http;
    try {
      http =
          HttpServers.create(
              HttpServerConfig.builder(new InetSocketAddress(config.host(), config.port()))
                  .backlog(256)
                  .build());
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot listen on " + config.host() + ":" + config.port() + ": " + e.getMessage(), e);
    }
    ExecutorService handlers = Executors.newVirtualThreadPerTaskExecutor();
    http.setExecutor(handlers);
    AgentServer server = new AgentServer(config, user, http, handlers);
    try {
      server.router = server.router();
      http.createContext("/", server.router);
    } catch (RuntimeException e) {
      server.close();
      throw e;
    }
    http.start();
    server.ready = true;
    server.bash.warmUp();
    if (server.open) {
      // Plain stderr, not System.Logger: loading java.util.logging at start costs ~6 MiB of RSS.
      System.err.println(
          "paddock agent-server: WARNING no session keys configured: /api is open to anyone who"
              + " can reach "
              + config.host()
              + ":"
              + server.port());
    }
    return server;
  }

  /** Creates the workspace (and its parents) when missing, as {@code mkdir -p} does. */
  private static void createWorkspace(Path workspace) {
    try {
      Files.createDirectories(workspace);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create the workspace " + workspace + ": " + e, e);
    }
  }

  /**
   * What commands learn about their agent: its URL on this machine (so a script can call its own
   * agent; the key stays with whoever holds it) and, in a sandbox, the sandbox's id under
   * OpenHands' name {@code SANDBOX_ID}.
   */
  static Map<String, String> agentVariables(AgentConfig config, int port) {
    Map<String, String> variables = new LinkedHashMap<>();
    variables.put(AGENT_URL_VARIABLE, "http://" + localHost(config.host()) + ":" + port);
    config.sandboxId().ifPresent(id -> variables.put("SANDBOX_ID", id));
    return variables;
  }

  /** The address a process on this machine uses to reach an agent bound to {@code host}. */
  private static String localHost(String host) {
    return switch (host) {
      case "0.0.0.0", "" -> "127.0.0.1";
      case "::", "[::]" -> "[::1]";
      default -> host.indexOf(':') >= 0 && !host.startsWith("[") ? "[" + host + "]" : host;
    };
  }

  /** The bound port (useful with port 0). */
  public int port() {
    return http.getAddress().getPort();
  }

  public AgentConfig config() {
    return config;
  }

  /** The routes served, as {@link Router#routes()} lists them. */
  List<String> routes() {
    return router.routes();
  }

  /** The body of {@code GET /alive}, as the JSON binder would write {@code {"status": "ok"}}. */
  private static final byte[] ALIVE_BODY =
      "{\"status\":\"ok\"}".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

  /**
   * {@code GET /alive}: a constant, with no JSON binder. It is the backends' readiness probe and so
   * often an agent's first request, and the binder's first use costs milliseconds in a fresh JVM
   * (the first command pays them instead, as it pays the rest of the command path).
   */
  private static void alive(Call call) throws IOException {
    call.setHeader("Content-Type", "application/json");
    call.send(200, ALIVE_BODY);
  }

  /** {@code GET /openapi.json}: the agent's API description, a resource kept beside this class. */
  private static void openApi(dev.paddock.http.Call call) throws IOException {
    try (java.io.InputStream in = AgentServer.class.getResourceAsStream("openapi.json")) {
      if (in == null) {
        throw new IllegalStateException("openapi.json is missing from the agent's jar");
      }
      byte[] body = in.readAllBytes();
      call.setHeader("Content-Type", "application/json");
      call.send(200, body);
    }
  }

  private Router router() {
    Router router =
        Router.builder()
            .maxJsonBytes(config.maxJsonBytes())
            .protect(List.of("/api/"), this::authorized, "missing or invalid " + SESSION_KEY_HEADER)
            .onActivity(activity)
            .build();
    router
        .add("GET", AgentProtocol.ALIVE, AgentServer::alive)
        .add("GET", "/openapi.json", AgentServer::openApi)
        .add("GET", "/health", call -> call.sendJson(200, Map.of("status", "ok")))
        .add("GET", "/ready", this::readiness)
        .add("GET", AgentProtocol.SERVER_INFO, this::serverInfo)
        .add("PUT", AgentProtocol.SESSION_KEYS, this::rotateKeys)
        .add("GET", EnvironmentProbe.ROUTE, new EnvironmentProbe(config.workspace())::handle)
        .add(
            "GET",
            ListeningPorts.ROUTE,
            new ListeningPorts(
                    Path.of("/proc"),
                    ProcessHandle.current()::descendants,
                    this::port,
                    user.switchTo())
                ::handle);
    BashRoutes.register(router, bash, config.defaultTimeout().toSeconds());
    BashRoutes.registerSockets(
        router,
        bash,
        config.defaultTimeout().toSeconds(),
        open,
        key -> config.sessionKeys().accepts(key),
        activity);
    FileRoutes.register(router, config, user);
    EditRoutes.register(router, config, user);
    SearchRoutes.register(router, config, user);
    GitRoutes.register(router, config, user);
    TerminalRoutes.register(router, terminals);
    SafeFs fs = SafeFs.create(config.fileRoots(), user);
    WatchRoutes.register(router, fs);
    config
        .pluginPath()
        .ifPresent(
            dir ->
                plugins =
                    Plugins.start(dir, router, fs, user, config.workspace(), bash.environment()));
    return router;
  }

  /** Work the router does not see: running commands and terminals; see {@link Activity}. */
  private boolean working() {
    return bash.anyRunning() || terminals.anyRunning();
  }

  /** Duplicate key headers are a 400 (through {@link Call#header}), never "first one wins". */
  private boolean authorized(Call call) {
    if (open) {
      return true;
    }
    return call.header(SESSION_KEY_HEADER).map(config.sessionKeys()::accepts).orElse(false)
        || (isAdminRead(call)
            && call.header(ADMIN_KEY_HEADER).map(config.adminKeys()::accepts).orElse(false));
  }

  /**
   * The admin key also reads workspace archives and the environment probe (OS and tool versions,
   * for the archive manifest), so the control plane can archive a sandbox before deleting it
   * without holding (or rotating in) a session key. It grants nothing new: whoever has the admin
   * key can already replace the session keys with one of its own.
   */
  private static boolean isAdminRead(Call call) {
    String path = call.path();
    return call.method().equals("GET")
        && (path.equals(ARCHIVE_ROUTE) || path.equals(ENVIRONMENT_ROUTE));
  }

  private void readiness(Call call) throws IOException {
    if (ready) {
      call.sendJson(200, Map.of("status", "ready"));
    } else {
      call.sendJson(
          503, Map.of("status", "initializing", "message", "Server is still initializing"));
    }
  }

  private void serverInfo(Call call) throws IOException {
    long now = System.nanoTime();
    Map<String, Object> info = new LinkedHashMap<>();
    info.put("title", "Paddock agent-server");
    info.put("version", version());
    info.put("uptime", (now - startedNanos) / 1e9);
    info.put("idle_time", activity.idleSeconds(now));
    info.put("java_version", Runtime.version().toString());
    info.put("usable_tools", List.of("bash", "file", "git"));
    info.put(
        "capabilities",
        List.of(
            "bash_v1",
            "streaming_exec_v1",
            "stdin_v1",
            "signals_v1",
            "sessions_v1",
            "file_archive_v1",
            "file_system_v1",
            "file_edit_v1",
            "file_search_v1",
            "git_v1",
            "session_key_rotation_v1",
            "event_stream_v1",
            "bash_events_socket_v1"));
    info.put("websockets", true);
    call.sendJson(200, info);
  }

  static String version() {
    String v = AgentServer.class.getPackage().getImplementationVersion();
    return v != null ? v : "dev";
  }

  /**
   * Replaces the accepted session keys (rotation without restart). Body: {@code
   * {"session_api_key_sha256": ["<hex>", ...]}}; only digests travel, never keys. Authenticated by
   * the admin secret, which is separate from session keys; 404 when no admin secret is set.
   */
  private void rotateKeys(Call call) throws IOException {
    if (config.adminKeys().isEmpty()) {
      throw HttpError.notFound("key rotation is disabled: no admin key configured");
    }
    if (!call.header(ADMIN_KEY_HEADER).map(config.adminKeys()::accepts).orElse(false)) {
      throw new HttpError(401, "missing or invalid " + ADMIN_KEY_HEADER);
    }
    JsonBody body = call.jsonBody(Set.of(AgentProtocol.SESSION_KEYS_FIELD));
    List<String> digests =
        body.optionalStringList(AgentProtocol.SESSION_KEYS_FIELD)
            .orElseThrow(
                () -> HttpError.unprocessable("field 'session_api_key_sha256' is required"));
    try {
      config.sessionKeys().replaceDigests(digests);
    } catch (IllegalArgumentException e) {
      throw HttpError.unprocessable(e.getMessage());
    }
    call.sendJson(200, Map.of("success", true, "key_count", digests.size()));
  }

  /** Stops serving, stops every running command and session, deletes the spool. */
  @Override
  public void close() {
    ready = false;
    http.stop(0);
    plugins.close();
    terminals.close();
    bash.close();
    handlers.shutdownNow();
  }
}
