package dev.paddock.http;

import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * One HTTP request and its response. Wraps the JDK exchange with the few things routes need: path
 * and query parameters, a size-limited body, JSON replies and streamed replies. Not thread-safe:
 * one handler thread owns it, except that a streamed body may be written from other threads when
 * the route synchronises on the stream it gets.
 */
public final class Call {
  private final HttpExchange exchange;
  private final Map<String, String> pathParams;
  private final long maxJsonBytes;
  private Map<String, List<String>> query;
  private boolean responded;

  Call(HttpExchange exchange, Map<String, String> pathParams, long maxJsonBytes) {
    this.exchange = exchange;
    this.pathParams = pathParams;
    this.maxJsonBytes = maxJsonBytes;
  }

  public String method() {
    return exchange.getRequestMethod();
  }

  public String path() {
    return exchange.getRequestURI().getPath();
  }

  public String pathParam(String name) {
    String value = pathParams.get(name);
    if (value == null) {
      throw new IllegalArgumentException("route has no path parameter " + name);
    }
    return value;
  }

  /**
   * The one value of request header {@code name}. A header sent more than once is a 400 naming it:
   * a request with two {@code Authorization} or {@code X-Session-API-Key} headers must not be
   * resolved silently by whichever comes first (hardening report D13). Auth predicates must read
   * their headers through this method; {@link #headerValues} is for list-valued headers.
   */
  public Optional<String> header(String name) {
    List<String> values = headerValues(name);
    if (values.size() > 1) {
      throw HttpError.badRequest("header '" + name + "' given more than once; send it once");
    }
    return values.isEmpty() ? Optional.empty() : Optional.of(values.get(0));
  }

  /** Every value of request header {@code name}, in the order received (empty when absent). */
  public List<String> headerValues(String name) {
    List<String> values = exchange.getRequestHeaders().get(name);
    return values == null ? List.of() : List.copyOf(values);
  }

  /**
   * The one value of query parameter {@code name}. A parameter given twice is a 400 naming it,
   * unless the route reads it with {@link #queryAll}, which declares it repeatable.
   */
  public Optional<String> query(String name) {
    List<String> values = queryParams().get(name);
    if (values == null || values.isEmpty()) {
      return Optional.empty();
    }
    if (values.size() > 1) {
      throw HttpError.badRequest(
          "query parameter '" + name + "' given " + values.size() + " times; it takes one value");
    }
    return Optional.of(values.get(0));
  }

  public String requiredQuery(String name) {
    return query(name)
        .orElseThrow(() -> HttpError.unprocessable("query parameter '" + name + "' is required"));
  }

  /** Every value of a repeatable query parameter ({@code ?id=a&id=b}), in order. */
  public List<String> queryAll(String name) {
    return queryParams().getOrDefault(name, List.of());
  }

  public Optional<Integer> queryInt(String name, int min, int max) {
    Optional<String> raw = query(name);
    if (raw.isEmpty()) {
      return Optional.empty();
    }
    int value;
    try {
      value = Integer.parseInt(raw.get().trim());
    } catch (NumberFormatException e) {
      throw HttpError.unprocessable(
          "query parameter '" + name + "' must be an integer, got '" + raw.get() + "'");
    }
    if (value < min || value > max) {
      throw HttpError.unprocessable(
          "query parameter '" + name + "' must be between " + min + " and " + max);
    }
    return Optional.of(value);
  }

  public Optional<Boolean> queryBoolean(String name) {
    return query(name)
        .map(
            raw ->
                switch (raw.toLowerCase(java.util.Locale.ROOT)) {
                  case "true", "1", "yes", "on" -> true;
                  case "false", "0", "no", "off" -> false;
                  default ->
                      throw HttpError.unprocessable(
                          "query parameter '"
                              + name
                              + "' must be true or false, got '"
                              + raw
                              + "'");
                });
  }

  /** Rejects query parameters outside {@code allowed} (a typo must not silently change meaning). */
  public void allowQuery(Set<String> allowed) {
    for (String name : queryParams().keySet()) {
      if (!allowed.contains(name)) {
        throw HttpError.unprocessable(
            "unknown query parameter '" + name + "'; allowed: " + new java.util.TreeSet<>(allowed));
      }
    }
  }

  /** The raw request body stream, for routes that stream uploads. */
  public InputStream body() {
    return exchange.getRequestBody();
  }

  public Optional<String> contentType() {
    return header("Content-Type");
  }

  /** The declared body length, or -1 when chunked or absent. */
  public long contentLength() {
    Optional<String> value = header("Content-Length");
    if (value.isEmpty()) {
      return -1;
    }
    try {
      return Long.parseLong(value.get().trim());
    } catch (NumberFormatException e) {
      throw HttpError.badRequest("invalid Content-Length header");
    }
  }

  /** Reads the whole body, refusing (413) anything larger than the JSON body limit. */
  public byte[] smallBody() throws IOException {
    long declared = contentLength();
    if (declared > maxJsonBytes) {
      throw tooLarge();
    }
    try (InputStream in = exchange.getRequestBody()) {
      byte[] body = in.readNBytes((int) maxJsonBytes + 1);
      if (body.length > maxJsonBytes) {
        throw tooLarge();
      }
      return body;
    }
  }

  /** Parses the body as a JSON object restricted to {@code allowedFields}. */
  public JsonBody jsonBody(Set<String> allowedFields) throws IOException {
    byte[] body = smallBody();
    if (body.length == 0) {
      throw HttpError.unprocessable("request body must be a JSON object, got an empty body");
    }
    return JsonBody.parse(body, allowedFields);
  }

  private HttpError tooLarge() {
    return new HttpError(
        413, "request body is larger than the limit of " + maxJsonBytes + " bytes");
  }

  public void setHeader(String name, String value) {
    exchange.getResponseHeaders().set(name, value);
  }

  public void sendJson(int status, Object value) throws IOException {
    byte[] body = Json.bytes(value);
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    send(status, body);
  }

  public void send(int status, byte[] body) throws IOException {
    responded = true;
    if (body.length == 0) {
      exchange.sendResponseHeaders(status, -1);
      return;
    }
    exchange.sendResponseHeaders(status, body.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(body);
    }
  }

  /**
   * Starts a streamed (chunked) 200 response and returns its body; the caller closes it. When
   * {@code length} is known it is sent as Content-Length instead.
   */
  public OutputStream stream(int status, String contentType, long length) throws IOException {
    responded = true;
    exchange.getResponseHeaders().set("Content-Type", contentType);
    exchange.sendResponseHeaders(status, length > 0 ? length : 0);
    return exchange.getResponseBody();
  }

  boolean responded() {
    return responded;
  }

  /** The response is being produced outside {@link #send} (a WebSocket upgrade). */
  void responding() {
    responded = true;
  }

  HttpExchange exchange() {
    return exchange;
  }

  private Map<String, List<String>> queryParams() {
    if (query == null) {
      query = parseQuery(exchange.getRequestURI().getRawQuery());
    }
    return query;
  }

  static Map<String, List<String>> parseQuery(String raw) {
    Map<String, List<String>> params = new LinkedHashMap<>();
    if (raw == null || raw.isEmpty()) {
      return params;
    }
    for (String pair : raw.split("&")) {
      if (pair.isEmpty()) {
        continue;
      }
      int eq = pair.indexOf('=');
      String name = decode(eq < 0 ? pair : pair.substring(0, eq));
      String value = eq < 0 ? "" : decode(pair.substring(eq + 1));
      params.computeIfAbsent(name, k -> new ArrayList<>(1)).add(value);
    }
    return params;
  }

  private static String decode(String s) {
    try {
      return URLDecoder.decode(s, StandardCharsets.UTF_8);
    } catch (IllegalArgumentException e) {
      throw HttpError.badRequest("malformed percent-encoding in query string");
    }
  }
}
