package dev.paddock.server.gateway;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import dev.paddock.api.ExposedUrl;
import dev.paddock.api.KeyDigest;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.http.HttpError;
import dev.paddock.store.SandboxRecord;
import dev.paddock.store.SandboxStore;
import dev.paddock.store.StoreException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The sandbox gateway: one address, the control plane's, for every sandbox's agent-server and every
 * port a sandbox listens on (docs/GATEWAY.md). Path mode {@code /sandboxes/{id}/agent/...} and
 * {@code /sandboxes/{id}/port/{port}/...}; host mode {@code {port}-{id}.{domain}} when a domain is
 * configured. Each request is checked against the store at the door (missing 404, paused 409,
 * starting 503 with {@code Retry-After}), port requests also against the sandbox's session key or a
 * signed URL token, and then relayed by a raw HTTP/1.1 forwarder on pooled keep-alive sockets
 * (WebSocket upgrades tunnelled). Thread-safe; create one per control plane and {@link #close()} it
 * after the HTTP server stops.
 */
public final class Gateway implements AutoCloseable {
  /** The query parameter (and cookie) carrying a signed URL token. */
  public static final String TOKEN_PARAM = "paddock_token";

  /**
   * The query parameter a browser's WebSocket to an agent route carries its session key in (a
   * browser cannot set headers on a WebSocket); the gateway moves it into {@code
   * X-Session-API-Key}.
   */
  static final String KEY_PARAM = "session_api_key";

  static final String AGENT_TEMPLATE = "/sandboxes/{id}/agent/*";
  static final String PORT_TEMPLATE = "/sandboxes/{id}/port/{port}/*";
  static final String HOST_TEMPLATE = "{port}-{id}.{domain}";

  private final GatewayConfig config;
  private final Targets targets;
  private final UpstreamPool pool;
  private final GatewayMetrics metrics = new GatewayMetrics();
  private final Forwarder forwarder;
  private final UrlTokens tokens;
  private final PortLists portLists;
  private final Wakes wakes;
  private final PublicPorts publicPorts;
  private final Clock clock;

  private Gateway(
      GatewayConfig config,
      SandboxStore store,
      Targets targets,
      SandboxKeys keys,
      SandboxResumer resumer,
      Clock clock) {
    this.config = config;
    this.targets = targets;
    this.pool =
        new UpstreamPool(
            config.poolSize(),
            config.poolIdle().toNanos(),
            (int) config.connectTimeout().toMillis());
    this.forwarder = new Forwarder(pool, config, metrics);
    this.tokens = new UrlTokens(config.tokenSecret());
    this.portLists = new PortLists(pool, keys);
    this.wakes = new Wakes(resumer, config.resumeWait());
    this.publicPorts = new PublicPorts(store);
    this.clock = clock;
  }

  /**
   * A gateway reading sandbox state from {@code store} and agent addresses from {@code backend},
   * asking agents which ports their sandbox listens on with the session keys {@code keys} gives.
   */
  public static Gateway create(
      SandboxStore store, SandboxBackend backend, SandboxKeys keys, GatewayConfig config) {
    return create(store, backend, keys, SandboxResumer.NONE, config);
  }

  /**
   * {@link #create(SandboxStore, SandboxBackend, SandboxKeys, GatewayConfig)} that also resumes a
   * paused sandbox created with {@code auto_resume} through {@code resumer} when a request that may
   * wake it arrives (a valid signed URL or a public port), then forwards that request.
   */
  public static Gateway create(
      SandboxStore store,
      SandboxBackend backend,
      SandboxKeys keys,
      SandboxResumer resumer,
      GatewayConfig config) {
    return new Gateway(
        config, store, new Targets(store, backend), keys, resumer, Clock.systemUTC());
  }

  /** A handler serving gateway requests and passing every other request to {@code api}. */
  public HttpHandler inFrontOf(HttpHandler api) {
    return exchange -> {
      Optional<Route> route = route(exchange);
      if (route.isEmpty()) {
        api.handle(exchange);
        return;
      }
      try {
        serve(exchange, route.get());
      } catch (StoreException e) {
        storeUnavailable(exchange, route.get(), e);
      } finally {
        exchange.close();
      }
    };
  }

  /** A gateway request: which sandbox, which port (empty: its agent), what to send upstream. */
  record Route(
      String sandboxId, Optional<Integer> port, String target, String prefix, String template) {}

  private Optional<Route> route(HttpExchange exchange) {
    Optional<Route> byHost = hostRoute(exchange);
    return byHost.isPresent() ? byHost : pathRoute(exchange);
  }

  private Optional<Route> hostRoute(HttpExchange exchange) {
    if (config.domain().isEmpty()) {
      return Optional.empty();
    }
    String host = exchange.getRequestHeaders().getFirst("Host");
    if (host == null) {
      return Optional.empty();
    }
    String name = host.toLowerCase(Locale.ROOT);
    int colon = name.lastIndexOf(':');
    if (colon > 0 && name.indexOf(']') < colon) {
      name = name.substring(0, colon);
    }
    String suffix = "." + config.domain().get();
    if (!name.endsWith(suffix)) {
      return Optional.empty();
    }
    String label = name.substring(0, name.length() - suffix.length());
    int dash = label.indexOf('-');
    if (dash <= 0 || label.contains(".")) {
      return Optional.empty();
    }
    Optional<Integer> port = port(label.substring(0, dash));
    if (port.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(
        new Route(label.substring(dash + 1), port, target(exchange, ""), "", HOST_TEMPLATE));
  }

  private Optional<Route> pathRoute(HttpExchange exchange) {
    String path = exchange.getRequestURI().getRawPath();
    if (!path.startsWith("/sandboxes/")) {
      return Optional.empty();
    }
    String[] parts = path.split("/", 6); // "", sandboxes, id, agent|port, [port], rest
    if (parts.length >= 4 && parts[3].equals("agent")) {
      String prefix = "/sandboxes/" + parts[2] + "/agent";
      return Optional.of(
          new Route(parts[2], Optional.empty(), target(exchange, prefix), prefix, AGENT_TEMPLATE));
    }
    if (parts.length >= 5 && parts[3].equals("port") && port(parts[4]).isPresent()) {
      String prefix = "/sandboxes/" + parts[2] + "/port/" + parts[4];
      return Optional.of(
          new Route(parts[2], port(parts[4]), target(exchange, prefix), prefix, PORT_TEMPLATE));
    }
    return Optional.of(
        new Route(parts.length > 2 ? parts[2] : "", Optional.empty(), "", "", "/sandboxes/*"));
  }

  private static Optional<Integer> port(String text) {
    if (text.isEmpty() || text.length() > 5 || !text.chars().allMatch(Character::isDigit)) {
      return Optional.empty();
    }
    int port = Integer.parseInt(text);
    return port >= 1 && port <= 65535 ? Optional.of(port) : Optional.empty();
  }

  /** The request target without the gateway's prefix and without a signed URL token. */
  private static String target(HttpExchange exchange, String prefix) {
    String rest = exchange.getRequestURI().getRawPath().substring(prefix.length());
    if (rest.isEmpty()) {
      rest = "/";
    } else if (!rest.startsWith("/")) {
      return ""; // "/sandboxes/x/agentfoo": not a gateway path
    }
    String query = withoutToken(exchange.getRequestURI().getRawQuery());
    return query.isEmpty() ? rest : rest + "?" + query;
  }

  private static String withoutToken(String rawQuery) {
    return without(rawQuery, TOKEN_PARAM);
  }

  private static String without(String rawQuery, String param) {
    if (rawQuery == null || rawQuery.isEmpty()) {
      return "";
    }
    StringBuilder kept = new StringBuilder(rawQuery.length());
    for (String pair : rawQuery.split("&")) {
      if (!pair.startsWith(param + "=") && !pair.equals(param) && !pair.isEmpty()) {
        kept.append(kept.isEmpty() ? "" : "&").append(pair);
      }
    }
    return kept.toString();
  }

  private void serve(HttpExchange exchange, Route route) throws IOException {
    if (route.target().isEmpty()) {
      reply(
          exchange,
          route,
          404,
          "no gateway route; use /sandboxes/{id}/agent/... or /sandboxes/{id}/port/{port}/...");
      return;
    }
    Targets.Lookup lookup = targets.lookup(route.sandboxId());
    if (lookup.agent().isEmpty() && mayWake(exchange, route, lookup)) {
      Optional<Targets.Lookup> woken = wake(exchange, route);
      if (woken.isEmpty()) {
        return;
      }
      lookup = woken.get();
    }
    if (lookup.agent().isEmpty()) {
      refuse(exchange, route, lookup.status());
      return;
    }
    if (lookup.stale() && route.port().isPresent()) {
      // Only the agent checks keys itself; a port's credentials are the store's to check.
      throw new StoreException("the store cannot be read to check a port's credentials");
    }
    SandboxRecord record = lookup.record().orElseThrow();
    if (route.port().isPresent() && !portAllowed(exchange, route, record)) {
      reply(
          exchange,
          route,
          401,
          "port "
              + route.port().get()
              + " of sandbox "
              + route.sandboxId()
              + " needs its 'X-Session-API-Key' or a signed URL (POST /api/v1/sandboxes/"
              + route.sandboxId()
              + "/ports/"
              + route.port().get()
              + "/url)");
      return;
    }
    if (route.port().isPresent() && !listened(exchange, route, record, lookup.agent().get())) {
      return;
    }
    forwarder.forward(exchange, plan(exchange, route, lookup.agent().get()));
  }

  /**
   * Whether this request resumes a paused sandbox: it was created with {@code auto_resume} and the
   * request is for one of its ports with a credential that a pause does not revoke (a public port
   * or a valid signed URL). The session key cannot wake it: the pause revoked it.
   */
  private boolean mayWake(HttpExchange exchange, Route route, Targets.Lookup lookup) {
    return lookup.status() == SandboxStatus.PAUSED
        && route.port().isPresent()
        && lookup.record().map(r -> r.settings().autoResume()).orElse(false)
        && portAllowed(exchange, route, lookup.record().get());
  }

  /** Resumes the sandbox (or joins its resume); its lookup after, or empty when answered here. */
  private Optional<Targets.Lookup> wake(HttpExchange exchange, Route route) throws IOException {
    Wakes.Result result = wakes.wake(route.sandboxId());
    switch (result.outcome()) {
      case RESUMED -> {
        metrics.resumed(route.template());
        return Optional.of(targets.lookup(route.sandboxId()));
      }
      case STILL_RESUMING -> {
        exchange.getResponseHeaders().set("Retry-After", "1");
        reply(
            exchange,
            route,
            503,
            "sandbox " + route.sandboxId() + " is resuming (auto_resume); retry shortly");
      }
      case FAILED ->
          reply(
              exchange,
              route,
              502,
              "sandbox " + route.sandboxId() + " could not be resumed: " + result.reason());
    }
    return Optional.empty();
  }

  /**
   * Whether a process of the sandbox's own tree listens on the route's port (else answered 403, or
   * 502 when its agent cannot say): on a shared network another sandbox's or the host's service may
   * own the same loopback port.
   */
  private boolean listened(
      HttpExchange exchange, Route route, SandboxRecord record, InetSocketAddress agent)
      throws IOException {
    int port = route.port().orElseThrow();
    try {
      if (portLists.listens(record, agent, port)) {
        return true;
      }
      reply(exchange, route, 403, notListening(port, route.sandboxId()));
    } catch (IOException e) {
      metrics.upstreamError(route.template());
      reply(exchange, route, 502, cannotList(route.sandboxId(), e));
    }
    return false;
  }

  private static String notListening(int port, String sandboxId) {
    return "port "
        + port
        + " is not a port sandbox "
        + sandboxId
        + " listens on (see GET /api/v1/sandboxes/"
        + sandboxId
        + "/ports)";
  }

  private static String cannotList(String sandboxId, IOException e) {
    return "cannot list the ports sandbox " + sandboxId + " listens on: " + e.getMessage();
  }

  /**
   * 503 with {@code Retry-After} when the store cannot be read (before anything was answered): the
   * sandbox cannot be looked up, or its port's credentials cannot be checked. Requests to the agent
   * of a sandbox this gateway routed before still go through ({@link Targets#lookup}).
   */
  private void storeUnavailable(HttpExchange exchange, Route route, StoreException e)
      throws IOException {
    if (exchange.getResponseCode() != -1) {
      throw e; // the answer had begun: nothing more can be said on this exchange
    }
    exchange.getResponseHeaders().set("Retry-After", "1");
    reply(
        exchange,
        route,
        503,
        "the store is unavailable right now, so sandbox "
            + route.sandboxId()
            + " cannot be looked up"
            + (route.port().isPresent() ? " nor its port's credentials checked" : "")
            + "; try again");
  }

  private void refuse(HttpExchange exchange, Route route, SandboxStatus status) throws IOException {
    HttpError refusal = refusal(route.sandboxId(), status);
    if (refusal.status() == 503) {
      exchange.getResponseHeaders().set("Retry-After", "1");
    }
    reply(exchange, route, refusal.status(), refusal.getMessage());
  }

  /** Why a sandbox in {@code status} gets no traffic, as the gateway answers it. */
  private static HttpError refusal(String id, SandboxStatus status) {
    return switch (status) {
      case PAUSED ->
          new HttpError(
              409,
              "sandbox " + id + " is paused; resume it (POST /api/v1/sandboxes/" + id + "/resume)");
      case STARTING -> new HttpError(503, "sandbox " + id + " is starting; retry shortly");
      case QUEUED ->
          new HttpError(503, "sandbox " + id + " is waiting in the start queue; retry later");
      case ERROR ->
          new HttpError(502, "sandbox " + id + " is in error; see GET /api/v1/sandboxes/" + id);
      default -> new HttpError(404, "sandbox " + id + " not found");
    };
  }

  /** A port a sandbox listens on, with its gateway URLs and whether its owner made it public. */
  public record ListedPort(
      int port, String address, String url, Optional<String> hostUrl, boolean open) {}

  /**
   * The ports a process of the sandbox's own tree listens on (its agent's answer, asked now), with
   * their URLs through this gateway at {@code baseUrl}. The caller checked that its user may see
   * the sandbox.
   *
   * @throws HttpError 404 missing, 409 paused, 503 starting, 502 in error or when its agent cannot
   *     say
   */
  public List<ListedPort> listening(String baseUrl, String sandboxId) {
    Targets.Lookup lookup = targets.lookup(sandboxId);
    if (lookup.agent().isEmpty()) {
      throw refusal(sandboxId, lookup.status());
    }
    List<PortLists.Port> ports;
    Set<Integer> open = lookup.record().orElseThrow().settings().publicPorts();
    try {
      ports = portLists.list(lookup.record().orElseThrow(), lookup.agent().get());
    } catch (IOException e) {
      throw new HttpError(502, cannotList(sandboxId, e));
    }
    String base = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
    return ports.stream()
        .map(
            p ->
                new ListedPort(
                    p.port(),
                    p.address(),
                    portUrl(base, sandboxId, p.port()),
                    config.domain().map(d -> hostUrl(base, sandboxId, p.port())),
                    open.contains(p.port())))
        .toList();
  }

  private void reply(HttpExchange exchange, Route route, int status, String detail)
      throws IOException {
    drain(exchange);
    Replies.detail(exchange, status, detail);
    metrics.replied(route.template(), status);
  }

  private static void drain(HttpExchange exchange) {
    try {
      exchange.getRequestBody().skip(1 << 16);
    } catch (IOException e) {
      // Best effort: the server closes the connection after the reply if bytes remain.
    }
  }

  /**
   * A public port, the sandbox's session key, or a signed URL token (query or cookie) for this
   * port.
   */
  private boolean portAllowed(HttpExchange exchange, Route route, SandboxRecord record) {
    if (record.settings().publicPorts().contains(route.port().orElseThrow())) {
      return true;
    }
    List<String> keys = exchange.getRequestHeaders().get("X-Session-API-Key");
    if (keys != null && keys.size() == 1 && record.sessionKeyHash().isPresent()) {
      if (KeyDigest.matches(keys.get(0), record.sessionKeyHash().get())) {
        return true;
      }
    }
    Optional<String> fromQuery = queryToken(exchange.getRequestURI().getRawQuery());
    if (fromQuery.isPresent() && validToken(fromQuery.get(), route)) {
      // set, not add: a request that woke its sandbox is checked twice.
      exchange
          .getResponseHeaders()
          .set(
              "Set-Cookie",
              TOKEN_PARAM
                  + "="
                  + fromQuery.get()
                  + "; Path="
                  + (route.prefix().isEmpty() ? "/" : route.prefix() + "/")
                  + "; HttpOnly; SameSite=Lax");
      return true;
    }
    return cookieToken(exchange).filter(t -> validToken(t, route)).isPresent();
  }

  private boolean validToken(String token, Route route) {
    return tokens.valid(token, route.sandboxId(), route.port().orElseThrow(), clock.instant());
  }

  private static Optional<String> queryToken(String rawQuery) {
    return queryParam(rawQuery, TOKEN_PARAM);
  }

  private static Optional<String> queryParam(String rawQuery, String param) {
    if (rawQuery == null) {
      return Optional.empty();
    }
    for (String pair : rawQuery.split("&")) {
      if (pair.startsWith(param + "=")) {
        return Optional.of(pair.substring(param.length() + 1));
      }
    }
    return Optional.empty();
  }

  private static Optional<String> cookieToken(HttpExchange exchange) {
    List<String> cookies = exchange.getRequestHeaders().get("Cookie");
    if (cookies == null) {
      return Optional.empty();
    }
    for (String header : cookies) {
      for (String pair : header.split(";")) {
        String p = pair.strip();
        if (p.startsWith(TOKEN_PARAM + "=")) {
          return Optional.of(p.substring(TOKEN_PARAM.length() + 1));
        }
      }
    }
    return Optional.empty();
  }

  private Forwarder.Plan plan(HttpExchange exchange, Route route, InetSocketAddress agent) {
    InetSocketAddress address =
        route.port().map(p -> new InetSocketAddress(agent.getAddress(), p)).orElse(agent);
    Map<String, String> added = new LinkedHashMap<>();
    String client = exchange.getRemoteAddress().getAddress().getHostAddress();
    String before = exchange.getRequestHeaders().getFirst("X-Forwarded-For");
    added.put("X-Forwarded-For", before == null ? client : before + ", " + client);
    added.put("X-Forwarded-Proto", config.secure() ? "https" : "http");
    String host = exchange.getRequestHeaders().getFirst("Host");
    if (host != null) {
      added.put("X-Forwarded-Host", host);
    }
    if (!route.prefix().isEmpty()) {
      added.put("X-Forwarded-Prefix", route.prefix());
    }
    // A port's app never sees the sandbox's key: it is the agent's credential, not the app's.
    Set<String> withheld = route.port().isPresent() ? Set.of("x-session-api-key") : Set.of();
    String target = route.target();
    Optional<String> queryKey = browserSocketKey(exchange, route);
    if (queryKey.isPresent()) {
      added.put("X-Session-API-Key", queryKey.get());
      target = withoutQueryKey(target);
    }
    return new Forwarder.Plan(address, target, added, withheld, route.template());
  }

  /**
   * The session key of a WebSocket upgrade to an agent route that carries it as a query parameter
   * and not as a header, as a browser must (OpenHands' sockets do the same): every agent route,
   * terminals included, then gets it the one way all of them accept.
   */
  private static Optional<String> browserSocketKey(HttpExchange exchange, Route route) {
    if (route.port().isPresent()
        || !Forwarder.isUpgrade(exchange)
        || exchange.getRequestHeaders().containsKey("X-Session-API-Key")) {
      return Optional.empty();
    }
    Optional<String> raw = queryParam(exchange.getRequestURI().getRawQuery(), KEY_PARAM);
    return raw.map(v -> java.net.URLDecoder.decode(v, java.nio.charset.StandardCharsets.UTF_8))
        .filter(v -> !v.isEmpty() && v.chars().allMatch(c -> c > 0x20 && c < 0x7f));
  }

  private static String withoutQueryKey(String target) {
    int q = target.indexOf('?');
    if (q < 0) {
      return target;
    }
    String query = without(target.substring(q + 1), KEY_PARAM);
    return query.isEmpty() ? target.substring(0, q) : target.substring(0, q) + "?" + query;
  }

  /**
   * {@code info} with its URLs pointing through this gateway at {@code baseUrl} (the control
   * plane's address as the client reached it, e.g. {@code http://127.0.0.1:8000}): the agent at
   * {@code /sandboxes/{id}/agent}, every other exposed port at {@code /sandboxes/{id}/port/{p}}.
   */
  public SandboxInfo exposedThrough(String baseUrl, SandboxInfo info) {
    String base = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
    List<ExposedUrl> urls =
        info.exposedUrls().stream()
            .map(
                u ->
                    new ExposedUrl(
                        u.name(),
                        u.name().equals(ExposedUrl.AGENT_SERVER)
                            ? agentUrl(base, info.id())
                            : portUrl(base, info.id(), u.port()),
                        u.port()))
            .toList();
    return info.withExposedUrls(urls); // everything else, the queue place too, as it was
  }

  public static String agentUrl(String base, String sandboxId) {
    return base + "/sandboxes/" + sandboxId + "/agent";
  }

  public static String portUrl(String base, String sandboxId, int port) {
    return base + "/sandboxes/" + sandboxId + "/port/" + port;
  }

  /** A signed URL and when it expires. */
  public record SignedUrl(String url, String token, Instant expiresAt) {}

  /**
   * A URL opening {@code port} of {@code sandboxId} without a key until it expires (after {@code
   * lifetime}, or the configured default when zero). The caller checked that its user may.
   *
   * @throws IllegalArgumentException when the lifetime is negative or beyond the maximum
   */
  public SignedUrl sign(String baseUrl, String sandboxId, int port, Duration lifetime) {
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("port must be between 1 and 65535, got " + port);
    }
    Duration life = lifetime.isZero() ? config.defaultUrlLifetime() : lifetime;
    if (life.isNegative() || life.compareTo(config.maxUrlLifetime()) > 0) {
      throw new IllegalArgumentException(
          "expires_in must be between 1 and " + config.maxUrlLifetime().toSeconds() + " seconds");
    }
    Instant expiry = clock.instant().plus(life).truncatedTo(java.time.temporal.ChronoUnit.SECONDS);
    String token = tokens.mint(sandboxId, port, expiry);
    String base = baseUrl.endsWith("/") ? baseUrl.substring(0, baseUrl.length() - 1) : baseUrl;
    String url =
        config.domain().isPresent()
            ? hostUrl(base, sandboxId, port) + "/?" + TOKEN_PARAM + "=" + token
            : portUrl(base, sandboxId, port) + "/?" + TOKEN_PARAM + "=" + token;
    return new SignedUrl(url, token, expiry);
  }

  private String hostUrl(String base, String sandboxId, int port) {
    java.net.URI uri = java.net.URI.create(base);
    String authority = port + "-" + sandboxId + "." + config.domain().orElseThrow();
    return uri.getScheme() + "://" + authority + (uri.getPort() > 0 ? ":" + uri.getPort() : "");
  }

  /**
   * Opens {@code port} of {@code sandboxId} to anyone through the gateway ({@code open}), or closes
   * it again (then it needs the session key or a signed URL). Kept in the store with the sandbox,
   * so it holds across restarts and replicas. The caller checked that its user owns the sandbox.
   *
   * @return the sandbox's public ports after the change
   * @throws HttpError 404 when the sandbox does not exist (any more)
   */
  public Set<Integer> setPublic(String sandboxId, int port, boolean open) {
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("port must be between 1 and 65535, got " + port);
    }
    return publicPorts.set(sandboxId, port, open);
  }

  /** The gateway's metrics in Prometheus text format. */
  public String scrape() {
    return metrics.scrape();
  }

  @Override
  public void close() {
    pool.close();
  }
}
