package dev.paddock.server;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import dev.paddock.api.ArchiveInfo;
import dev.paddock.api.Caller;
import dev.paddock.api.SandboxService;
import dev.paddock.api.SandboxSpecService;
import dev.paddock.api.WorkspaceArchives;
import dev.paddock.http.HttpServerConfig;
import dev.paddock.http.HttpServers;
import dev.paddock.http.Router;
import dev.paddock.store.SandboxStore;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
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
    HttpServer http;
    try {
      http =
          HttpServers.create(
              HttpServerConfig.builder(new InetSocketAddress(host, port)).backlog(512).build());
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot listen on " + host + ":" + port + ": " + e.getMessage(), e);
    }
    Authenticator auth = new Authenticator(store);
    Router router = Router.builder().maxJsonBytes(4L << 20).build();
    router
        .add("GET", "/alive", call -> call.sendJson(200, Map.of("status", "ok")))
        .add("GET", "/health", call -> call.sendJson(200, Map.of("status", "ok")))
        .add("GET", "/ready", call -> call.sendJson(200, Map.of("status", "ready")))
        .add(
            "GET",
            "/metrics",
            call -> {
              call.setHeader("Content-Type", "text/plain; version=0.0.4");
              call.send(200, metrics.scrape(store).getBytes(StandardCharsets.UTF_8));
            })
        .add(
            "GET",
            "/openapi.json",
            call -> {
              call.setHeader("Content-Type", "application/json");
              call.send(200, openApi());
            });
    new SandboxRoutes(sandboxes, auth).register(router);
    new SpecRoutes(specs, auth).register(router);
    new ArchiveRoutes(archives, auth).register(router);
    new UserRoutes(store, auth, Clock.systemUTC()).register(router);
    new WebhookRoutes(sandboxes, store).register(router);
    ExecutorService handlers = Executors.newVirtualThreadPerTaskExecutor();
    http.setExecutor(handlers);
    http.createContext("/", counted(router, metrics));
    http.start();
    return new ApiServer(http, handlers);
  }

  /** Counts every request by method, route template and status code. */
  private static HttpHandler counted(HttpHandler router, Metrics metrics) {
    return (HttpExchange exchange) -> {
      try {
        router.handle(exchange);
      } finally {
        metrics.request(
            exchange.getRequestMethod(),
            Metrics.route(exchange.getRequestURI().getPath()),
            exchange.getResponseCode());
      }
    };
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
