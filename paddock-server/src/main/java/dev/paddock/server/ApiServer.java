package dev.paddock.server;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import dev.paddock.api.ArchiveInfo;
import dev.paddock.api.Caller;
import dev.paddock.api.SandboxService;
import dev.paddock.api.SandboxSpecService;
import dev.paddock.api.WorkspaceArchives;
import dev.paddock.http.Call;
import dev.paddock.http.HttpError;
import dev.paddock.http.HttpServerConfig;
import dev.paddock.http.HttpServers;
import dev.paddock.http.Router;
import dev.paddock.server.gateway.Gateway;
import dev.paddock.store.SandboxStore;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The control plane's HTTP API on the JDK server with virtual threads: sandboxes and specs
 * (OpenHands' paths), users and API keys, webhooks, {@code /metrics}, {@code /openapi.json}. Users
 * authenticate with {@code Authorization: Bearer <api key>}.
 */
public final class ApiServer implements AutoCloseable {
  private final HttpServer http;

  /**
   * Busy connections served on platform threads (HttpServerConfig#platformThreads): a gateway
   * request waits on the sandbox's socket and then on the client's, and each wake-up of a virtual
   * thread costs the poller and a carrier hand-off on top; idle keep-alive connections, WebSockets
   * and tunnels move to virtual threads, so this bounds platform threads, not connections.
   */
  public static final int PLATFORM_CONNECTIONS = 64;

  private final ExecutorService handlers;

  private static final WorkspaceArchives NO_ARCHIVES =
      new WorkspaceArchives() {
        @Override
        public List<ArchiveInfo> list(Caller caller, String sandboxId) {
          return List.of();
        }

        @Override
        public Optional<InputStream> open(Caller caller, String sandboxId, String name) {
          return Optional.empty();
        }
      };

  private ApiServer(HttpServer http, ExecutorService handlers) {
    this.http = http;
    this.handlers = handlers;
  }

  /** Binds {@code host:port} (0 for any free port) and serves until {@link #close()}. */
  public static ApiServer start(
      String host,
      int port,
      SandboxService sandboxes,
      SandboxSpecService specs,
      SandboxStore store,
      Metrics metrics) {
    return start(host, port, sandboxes, specs, store, metrics, NO_ARCHIVES);
  }

  /** As above, also serving {@code /api/v1/archives} from {@code archives}. */
  public static ApiServer start(
      String host,
      int port,
      SandboxService sandboxes,
      SandboxSpecService specs,
      SandboxStore store,
      Metrics metrics,
      WorkspaceArchives archives) {
    return start(host, port, sandboxes, specs, store, metrics, archives, ApiServerConfig.DEFAULT);
  }

  /** As above, with the API's limits and keys from {@code config}. */
  public static ApiServer start(
      String host,
      int port,
      SandboxService sandboxes,
      SandboxSpecService specs,
      SandboxStore store,
      Metrics metrics,
      WorkspaceArchives archives,
      ApiServerConfig config) {
    return start(
        HttpServerConfig.builder(new InetSocketAddress(host, port))
            .backlog(512)
            .platformThreads(PLATFORM_CONNECTIONS)
            .build(),
        sandboxes,
        specs,
        store,
        metrics,
        archives,
        config,
        Optional.empty(),
        Optional.empty());
  }

  /**
   * As above on the HTTP server {@code http} describes (address, TLS), with the sandbox gateway in
   * front of the API when {@code gateway} is given: {@code /sandboxes/...} and host-mode requests
   * go to it, exposed URLs point through it, its metrics join {@code /metrics}.
   */
  public static ApiServer start(
      HttpServerConfig http,
      SandboxService sandboxes,
      SandboxSpecService specs,
      SandboxStore store,
      Metrics metrics,
      WorkspaceArchives archives,
      ApiServerConfig config,
      Gateway gateway) {
    return start(
        http,
        sandboxes,
        specs,
        store,
        metrics,
        archives,
        config,
        Optional.empty(),
        Optional.of(gateway));
  }

  /**
   * As above, also serving each sandbox's stats and kept logs, and per-sandbox series in {@code
   * /metrics} when {@code observability} turns them on.
   */
  public static ApiServer start(
      HttpServerConfig http,
      SandboxService sandboxes,
      SandboxSpecService specs,
      SandboxStore store,
      Metrics metrics,
      WorkspaceArchives archives,
      ApiServerConfig config,
      Observability observability,
      Gateway gateway) {
    return start(
        http,
        sandboxes,
        specs,
        store,
        metrics,
        archives,
        config,
        Optional.of(observability),
        Optional.of(gateway));
  }

  /** As above, without the gateway. */
  public static ApiServer start(
      HttpServerConfig http,
      SandboxService sandboxes,
      SandboxSpecService specs,
      SandboxStore store,
      Metrics metrics,
      WorkspaceArchives archives,
      ApiServerConfig config,
      Observability observability) {
    return start(
        http,
        sandboxes,
        specs,
        store,
        metrics,
        archives,
        config,
        Optional.of(observability),
        Optional.empty());
  }

  /**
   * On the HTTP server {@code http} describes (address, TLS), without the gateway: exposed URLs
   * name the agents directly.
   */
  public static ApiServer start(
      HttpServerConfig http,
      SandboxService sandboxes,
      SandboxSpecService specs,
      SandboxStore store,
      Metrics metrics,
      WorkspaceArchives archives,
      ApiServerConfig config) {
    return start(
        http,
        sandboxes,
        specs,
        store,
        metrics,
        archives,
        config,
        Optional.empty(),
        Optional.empty());
  }

  private static ApiServer start(
      HttpServerConfig httpConfig,
      SandboxService sandboxes,
      SandboxSpecService specs,
      SandboxStore store,
      Metrics metrics,
      WorkspaceArchives archives,
      ApiServerConfig config,
      Optional<Observability> observability,
      Optional<Gateway> gateway) {
    String host = httpConfig.address().getHostString();
    int port = httpConfig.address().getPort();
    HttpServer http;
    try {
      http = HttpServers.create(httpConfig);
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot listen on " + host + ":" + port + ": " + e.getMessage(), e);
    }
    Authenticator auth = new Authenticator(store);
    StoreHealth storeHealth = new StoreHealth(store);
    Router router = Router.builder().maxJsonBytes(4L << 20).build();
    Optional<SandboxSeries> series = observability.map(SandboxSeries::new);
    router
        .add("GET", "/alive", call -> call.sendJson(200, Map.of("status", "ok")))
        .add("GET", "/health", call -> health(call, storeHealth))
        .add("GET", "/ready", call -> call.sendJson(200, Map.of("status", "ready")))
        .add(
            "GET",
            "/metrics",
            Failures.mapped(
                call -> {
                  config.metricsKey().ifPresent(key -> requireMetricsKey(call, key));
                  String text =
                      metrics.scrape(store)
                          + series.map(s -> s.scrape(store)).orElse("")
                          + gateway.map(Gateway::scrape).orElse("");
                  call.setHeader("Content-Type", "text/plain; version=0.0.4");
                  call.send(200, text.getBytes(StandardCharsets.UTF_8));
                }))
        .add(
            "GET",
            "/openapi.json",
            call -> {
              call.setHeader("Content-Type", "application/json");
              call.send(200, openApi());
            });
    GatewayRoutes gatewayRoutes = new GatewayRoutes(gateway, sandboxes, auth, httpConfig.secure());
    new SandboxRoutes(sandboxes, auth, gatewayRoutes).register(router);
    gatewayRoutes.register(router);
    observability.ifPresent(o -> new UsageRoutes(o, auth).register(router));
    new SpecRoutes(specs, auth).register(router);
    new ArchiveRoutes(archives, auth).register(router);
    new UserRoutes(store, auth, Clock.systemUTC()).register(router);
    new WebhookRoutes(sandboxes, store, config).register(router);
    ExecutorService handlers = Executors.newVirtualThreadPerTaskExecutor();
    http.setExecutor(handlers);
    HttpHandler api = counted(router, metrics);
    http.createContext("/", gateway.map(g -> g.inFrontOf(api)).orElse(api));
    http.start();
    return new ApiServer(http, handlers);
  }

  /**
   * Counts every request by method, route template and status code; a path no route matches counts
   * as {@link Metrics#UNMATCHED}, so neither ids nor whatever a client puts in a path (a secret, an
   * injection attempt) reach the metrics.
   */
  private static HttpHandler counted(Router router, Metrics metrics) {
    return (HttpExchange exchange) -> {
      try {
        router.handle(exchange);
      } finally {
        metrics.request(
            exchange.getRequestMethod(),
            router.template(exchange.getRequestURI().getPath()).orElse(Metrics.UNMATCHED),
            exchange.getResponseCode());
      }
    };
  }

  /**
   * 200 {@code {"status": "ok", "store": "ok"}}, or 503 with {@code "store": "unreachable"} while
   * the store does not answer. Liveness and readiness are {@code /alive} and {@code /ready}, which
   * do not look at the store: every replica shares it, so a store outage must neither restart them
   * nor take them all out of a load balancer (which would cut the gateway's traffic to running
   * sandboxes, and turn each request's 503 into a refused connection).
   */
  private static void health(Call call, StoreHealth store) throws IOException {
    Map<String, String> body = new LinkedHashMap<>();
    if (store.answers()) {
      body.put("status", "ok");
      body.put("store", "ok");
      call.sendJson(200, body);
      return;
    }
    body.put("status", "unavailable");
    body.put("store", "unreachable");
    body.put(
        "detail",
        "the store does not answer; requests that need it answer 503 until it does,"
            + " running sandboxes keep running");
    call.sendJson(503, body);
  }

  /** {@code Authorization: Bearer <key>}, compared in constant time. @throws HttpError 401 */
  private static void requireMetricsKey(Call call, String key) {
    String header = call.header("Authorization").orElse("");
    byte[] given =
        header.regionMatches(true, 0, "Bearer ", 0, 7)
            ? header.substring(7).trim().getBytes(StandardCharsets.UTF_8)
            : new byte[0];
    if (!MessageDigest.isEqual(given, key.getBytes(StandardCharsets.UTF_8))) {
      throw new HttpError(401, "/metrics needs 'Authorization: Bearer <PADDOCK_METRICS_KEY>'");
    }
  }

  private static byte[] openApi() throws IOException {
    try (InputStream in = ApiServer.class.getResourceAsStream("openapi.json")) {
      if (in == null) {
        throw new IOException("openapi.json is missing from the build");
      }
      return in.readAllBytes();
    }
  }

  public int port() {
    return http.getAddress().getPort();
  }

  /**
   * Creates the first admin when there is no user yet: with {@code presetKey} (from {@code
   * PADDOCK_ADMIN_KEY}) or a new key, returned so the caller can show it once.
   */
  public static java.util.Optional<String> bootstrapAdmin(
      SandboxStore store, java.util.Optional<String> presetKey) {
    return UserRoutes.bootstrapAdmin(store, presetKey, Clock.systemUTC());
  }

  @Override
  public void close() {
    http.stop(0);
    handlers.shutdownNow();
  }
}
