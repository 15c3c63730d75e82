package dev.paddock.http;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;

/**
 * Matches method and path templates such as {@code /api/bash/bash_events/{id}} to routes, runs the
 * auth guard for protected prefixes, and turns every failure into a JSON {@code {"detail": ...}}
 * reply. An unexpected exception is logged with an error id and answered 500 with that id only.
 */
public final class Router implements HttpHandler {
  /** A route body. May throw {@link HttpError} for client errors. */
  @FunctionalInterface
  public interface Route {
    void handle(Call call) throws Exception;
  }

  private record Entry(String method, String template, String[] segments, Route route) {}

  private static final System.Logger LOG = System.getLogger("paddock.agent.http");

  private final List<Entry> entries = new ArrayList<>();
  private final long maxJsonBytes;
  private final Predicate<HttpExchange> authorized;
  private final List<String> protectedPrefixes;
  private final Runnable onActivity;

  /**
   * @param authorized decides whether a request to a protected prefix may proceed (else 401)
   * @param onActivity called for each request to a protected prefix (idle-time tracking)
   */
  public Router(
      long maxJsonBytes,
      List<String> protectedPrefixes,
      Predicate<HttpExchange> authorized,
      Runnable onActivity) {
    this.maxJsonBytes = maxJsonBytes;
    this.protectedPrefixes = List.copyOf(protectedPrefixes);
    this.authorized = authorized;
    this.onActivity = onActivity;
  }

  /**
   * Turns on TCP_NODELAY for the JDK HTTP server's connections; call before creating a server.
   * Without it a keep-alive reply written in more than one segment waits for the client's delayed
   * ACK: about 40 ms per request (measured: listing 25 sandboxes took 44 ms, 1.3 ms with it).
   */
  public static void disableNagle() {
    System.setProperty("sun.net.httpserver.nodelay", "true");
  }

  public Router add(String method, String template, Route route) {
    entries.add(new Entry(method, template, split(template), route));
    return this;
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
    Call call = null;
    try {
      String path = exchange.getRequestURI().getPath();
      if (isProtected(path)) {
        if (!authorized.test(exchange)) {
          drain(exchange);
          reply(exchange, 401, "missing or invalid X-Session-API-Key");
          return;
        }
        onActivity.run();
      }
      String[] segments = split(path);
      Map<String, String> params = new HashMap<>();
      boolean pathMatched = false;
      for (Entry entry : entries) {
        params.clear();
        if (!matches(entry.segments, segments, params)) {
          continue;
        }
        pathMatched = true;
        if (entry.method.equals(exchange.getRequestMethod())) {
          call = new Call(exchange, Map.copyOf(params), maxJsonBytes);
          entry.route.handle(call);
          return;
        }
      }
      drain(exchange);
      if (pathMatched) {
        reply(exchange, 405, "method " + exchange.getRequestMethod() + " not allowed on " + path);
      } else {
        reply(exchange, 404, "no route for " + exchange.getRequestMethod() + " " + path);
      }
    } catch (HttpError e) {
      if (call == null || !call.responded()) {
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
      if (e instanceof InterruptedException) {
        Thread.currentThread().interrupt();
      }
      String errorId = Long.toHexString(System.nanoTime());
      LOG.log(
          System.Logger.Level.ERROR,
          "unexpected failure (error_id " + errorId + ") on " + exchange.getRequestURI().getPath(),
          e);
      if (call == null || !call.responded()) {
        reply(exchange, 500, "internal error (error_id " + errorId + ")");
      }
    } finally {
      exchange.close();
    }
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
