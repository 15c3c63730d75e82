package dev.paddock.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * Matches method and path templates such as {@code /api/bash/bash_events/{id}} to routes, runs the
 * auth guard for protected prefixes (WebSocket routes included, before the upgrade), and turns
 * every failure into a JSON {@code {"detail": ...}} reply. A {@code HEAD} runs the {@code GET}
 * route of its path and gets its headers without the body. An unexpected exception is logged with
 * an error id and answered 500 with that id only. Build with {@link #builder()}; register routes
 * before the server starts (the route table is not guarded for concurrent changes).
 */
public final class Router implements HttpHandler {
  /** A route body. May throw {@link HttpError} for client errors. */
  @FunctionalInterface
  public interface Route {
    void handle(Call call) throws Exception;
  }

  private record Entry(
      String method, String template, String[] segments, Route route, WebSocketRoute socket) {
    boolean isWebSocket() {
      return socket != null;
    }

    boolean answers(String requestMethod) {
      return method.equals(requestMethod)
          || (requestMethod.equals("HEAD") && method.equals("GET") && !isWebSocket());
    }
  }

  private static final System.Logger LOG = System.getLogger("paddock.http");

  private final List<Entry> entries = new ArrayList<>();
  private final long maxJsonBytes;
  private final Predicate<Call> authorized;
  private final List<String> protectedPrefixes;
  private final String unauthorizedDetail;
  private final ActivityListener activity;

  private Router(Builder builder) {
    this.maxJsonBytes = builder.maxJsonBytes;
    this.protectedPrefixes = builder.protectedPrefixes;
    this.authorized = builder.authorized;
    this.unauthorizedDetail = builder.unauthorizedDetail;
    this.activity = builder.activity;
  }

  /** A router with a 1 MiB JSON body limit, no protected prefix and no activity hook. */
  public static Builder builder() {
    return new Builder();
  }

  /** Configures a {@link Router}. */
  public static final class Builder {
    private long maxJsonBytes = 1 << 20;
    private List<String> protectedPrefixes = List.of();
    private Predicate<Call> authorized = call -> true;
    private String unauthorizedDetail = "unauthorized";
    private ActivityListener activity = ActivityListener.NONE;

    private Builder() {}

    /** The largest body {@link Call#smallBody()} and {@link Call#jsonBody} accept (else 413). */
    public Builder maxJsonBytes(long bytes) {
      this.maxJsonBytes = bytes;
      return this;
    }

    /**
     * Requests whose path starts with one of {@code prefixes} must pass {@code authorized}, else
     * they get 401 {@code {"detail": unauthorizedDetail}} (which should name the header to send).
     * The predicate should read headers through {@link Call#header}, which refuses duplicates.
     */
    public Builder protect(
        List<String> prefixes, Predicate<Call> authorized, String unauthorizedDetail) {
      this.protectedPrefixes = List.copyOf(prefixes);
      this.authorized = Objects.requireNonNull(authorized, "authorized");
      this.unauthorizedDetail = Objects.requireNonNull(unauthorizedDetail, "unauthorizedDetail");
      return this;
    }

    /**
     * Told when each authorized request to a protected prefix starts and ends, and when each
     * WebSocket opened through one opens and closes (idle-time tracking).
     */
    public Builder onActivity(ActivityListener activity) {
      this.activity = Objects.requireNonNull(activity, "activity");
      return this;
    }

    public Router build() {
      return new Router(this);
    }
  }

  public Router add(String method, String template, Route route) {
    entries.add(new Entry(method, template, split(template), route, null));
    return this;
  }

  /**
   * Serves WebSocket connections on {@code template}: a {@code GET} with {@code Upgrade: websocket}
   * runs {@code route} (after the auth check when the path is protected) and, when it returns a
   * listener, switches the connection to WebSocket (101). A plain {@code GET} there is a 426 {@code
   * {"detail"}} naming the upgrade needed. A route may choose a subprotocol by setting the {@code
   * Sec-WebSocket-Protocol} response header with {@link Call#setHeader}. Needs a server from {@link
   * HttpServers}; on another server an upgrade is a 501.
   */
  public Router websocket(String template, WebSocketRoute route) {
    entries.add(
        new Entry("GET", template, split(template), null, Objects.requireNonNull(route, "route")));
    return this;
  }

  /**
   * Every route registered, in order, as {@code "METHOD template"} ({@code "GET /api/x/{id}"}; a
   * WebSocket route is its {@code GET}): for checking a route description (an OpenAPI document)
   * against what is really served.
   */
  public List<String> routes() {
    return entries.stream().map(e -> e.method + " " + e.template).toList();
  }

  /**
   * The template of the first route whose path matches {@code path}, whatever its method: what
   * metrics may name a request by, never the raw path (its ids and any secret in it stay out).
   */
  public Optional<String> template(String path) {
    String[] segments = split(path);
    Map<String, String> ignored = new HashMap<>();
    for (Entry entry : entries) {
      if (matches(entry.segments, segments, ignored)) {
        return Optional.of(entry.template);
      }
    }
    return Optional.empty();
  }

  @Override
  public void handle(HttpExchange exchange) throws IOException {
    Call call = new Call(exchange, Map.of(), maxJsonBytes);
    boolean tracked = false;
    try {
      String path = exchange.getRequestURI().getPath();
      if (isProtected(path)) {
        if (!authorized.test(call)) {
          drain(exchange);
          reply(exchange, 401, unauthorizedDetail);
          return;
        }
        activity.started();
        tracked = true;
      }
      Match match = match(exchange, path);
      call = new Call(exchange, match.params(), maxJsonBytes);
      run(match.entry(), call, tracked);
    } catch (HttpError e) {
      if (!call.responded()) {
        drain(exchange);
        reply(exchange, e.status(), e.getMessage());
      }
    } catch (IOException | java.io.UncheckedIOException e) {
      // The client went away mid-request or mid-response: nothing left to tell it. The path only:
      // a query string may carry a key (OpenHands' session_api_key), and logs must never.
      LOG.log(
          System.Logger.Level.DEBUG,
          "connection closed during " + exchange.getRequestURI().getPath(),
          e);
    } catch (Exception e) {
      unexpected(exchange, call, e);
    } finally {
      exchange.close();
      if (tracked) {
        activity.ended();
      }
    }
  }

  private record Match(Entry entry, Map<String, String> params) {}

  /** The route for this method and path; 404 or 405 when there is none. */
  private Match match(HttpExchange exchange, String path) {
    String[] segments = split(path);
    Map<String, String> params = new HashMap<>();
    boolean pathMatched = false;
    String method = exchange.getRequestMethod();
    for (Entry entry : entries) {
      params.clear();
      if (!matches(entry.segments, segments, params)) {
        continue;
      }
      pathMatched = true;
      if (entry.answers(method)) {
        return new Match(entry, Map.copyOf(params));
      }
    }
    drain(exchange);
    if (pathMatched) {
      throw new HttpError(405, "method " + method + " not allowed on " + shortPath(path));
    }
    throw HttpError.notFound("no route for " + method + " " + shortPath(path));
  }

  private void run(Entry entry, Call call, boolean tracked) throws Exception {
    if (entry.isWebSocket()) {
      upgrade(call, entry.socket, tracked);
    } else {
      entry.route.handle(call);
    }
  }

  private void upgrade(Call call, WebSocketRoute route, boolean tracked) throws Exception {
    if (!WebSocketHandshake.requested(call)) {
      call.setHeader("Upgrade", "websocket");
      throw new HttpError(426, "this route needs a WebSocket upgrade (Upgrade: websocket)");
    }
    String accept = WebSocketHandshake.accept(call);
    if (!(call.exchange() instanceof PaddockExchange exchange)) {
      throw new HttpError(501, "this server cannot upgrade connections to WebSocket");
    }
    WebSocketListener accepted = Objects.requireNonNull(route.accept(call), "listener");
    WebSocketListener listener = tracked ? tracked(accepted) : accepted;
    call.responding();
    exchange.upgrade(accept, listener);
  }

  /**
   * {@code listener}, with the socket's life (open to close, called once each) told to activity.
   */
  private WebSocketListener tracked(WebSocketListener listener) {
    return new WebSocketListener() {
      @Override
      public void onOpen(WebSocket socket) {
        activity.started();
        listener.onOpen(socket);
      }

      @Override
      public void onText(WebSocket socket, String text) {
        listener.onText(socket, text);
      }

      @Override
      public void onBinary(WebSocket socket, byte[] data) {
        listener.onBinary(socket, data);
      }

      @Override
      public void onClose(WebSocket socket, int code, String reason) {
        try {
          listener.onClose(socket, code, reason);
        } finally {
          activity.ended();
        }
      }
    };
  }

  private void unexpected(HttpExchange exchange, Call call, Exception e) {
    if (e instanceof InterruptedException) {
      Thread.currentThread().interrupt();
    }
    String errorId = Long.toHexString(System.nanoTime());
    LOG.log(
        System.Logger.Level.ERROR,
        "unexpected failure (error_id "
            + errorId
            + ") on "
            + shortPath(exchange.getRequestURI().getPath()),
        e);
    if (!call.responded()) {
      reply(exchange, 500, "internal error (error_id " + errorId + ")");
    }
  }

  /** A path short enough to echo back or log (D10: a 100k-character path is not repeated). */
  private static String shortPath(String path) {
    return path.length() <= 200 ? path : path.substring(0, 200) + "...";
  }

  private boolean isProtected(String path) {
    for (String prefix : protectedPrefixes) {
      if (path.startsWith(prefix)) {
        return true;
      }
    }
    return false;
  }

  private static boolean matches(String[] template, String[] path, Map<String, String> params) {
    if (template.length != path.length) {
      return false;
    }
    for (int i = 0; i < template.length; i++) {
      String t = template[i];
      if (t.startsWith("{") && t.endsWith("}")) {
        params.put(t.substring(1, t.length() - 1), path[i]);
      } else if (!t.equals(path[i])) {
        return false;
      }
    }
    return true;
  }

  private static String[] split(String path) {
    String trimmed = path;
    while (trimmed.length() > 1 && trimmed.endsWith("/")) {
      trimmed = trimmed.substring(0, trimmed.length() - 1);
    }
    return trimmed.equals("/") ? new String[0] : trimmed.substring(1).split("/", -1);
  }

  /** Reads and discards a small request body so keep-alive connections stay usable. */
  private static void drain(HttpExchange exchange) {
    try {
      exchange.getRequestBody().skip(1 << 16);
    } catch (IOException ignored) {
      // Best effort only: the connection is closed after this reply if bytes remain.
    }
  }

  static void reply(HttpExchange exchange, int status, String detail) {
    try {
      byte[] body = Json.bytes(Map.of("detail", detail));
      exchange.getResponseHeaders().set("Content-Type", "application/json");
      exchange.sendResponseHeaders(status, body.length);
      exchange.getResponseBody().write(body);
    } catch (IOException | RuntimeException e) {
      LOG.log(System.Logger.Level.DEBUG, "could not send error reply", e);
    }
  }
}
