package dev.paddock.backend.remote;

import com.fasterxml.jackson.jr.ob.JSON;
import java.io.IOException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.HttpTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Calls runtime APIs with their {@code X-API-Key}. A GET that times out is sent once more (it
 * changes nothing); a POST is never repeated, since a lost reply may hide a change that happened.
 * Thread-safe.
 */
final class RuntimeApiClient implements AutoCloseable {
  /** A runtime API's answer: its status and JSON body (null when it sent none). */
  record Reply(int status, Object json) {
    boolean ok() {
      return status / 100 == 2;
    }

    @SuppressWarnings("unchecked")
    Map<String, Object> object() {
      return json instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
    }

    Optional<String> string(String field) {
      return object().get(field) instanceof String s ? Optional.of(s) : Optional.empty();
    }

    /** The {@code detail} of an error reply, for logs. */
    String detail() {
      return string("detail").orElse("HTTP " + status);
    }
  }

  /** The runtime API could not be reached or did not answer in time. */
  static final class UnreachableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    UnreachableException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  private final HttpClient http;
  private final Duration timeout;

  RuntimeApiClient(Duration timeout) {
    this.timeout = timeout;
    this.http = HttpClient.newBuilder().connectTimeout(timeout).build();
  }

  /** GET {@code path}; tried once more when the first attempt times out. */
  Reply get(RemoteHost host, String path) {
    HttpRequest request = request(host, path, timeout).GET().build();
    try {
      return send(host, request);
    } catch (UnreachableException e) {
      if (!(e.getCause() instanceof HttpTimeoutException)) {
        throw e;
      }
      return send(host, request);
    }
  }

  /** POST {@code body} as JSON to {@code path}, once, waiting up to {@code wait}. */
  Reply post(RemoteHost host, String path, Map<String, Object> body, Duration wait) {
    HttpRequest request =
        request(host, path, wait)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json(body)))
            .build();
    return send(host, request);
  }

  Duration timeout() {
    return timeout;
  }

  private static HttpRequest.Builder request(RemoteHost host, String path, Duration wait) {
    return HttpRequest.newBuilder(host.resolve(path))
        .timeout(wait)
        .header("X-API-Key", host.key())
        .header("Accept", "application/json");
  }

  private Reply send(RemoteHost host, HttpRequest request) {
    try {
      HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
      return new Reply(response.statusCode(), parse(response.body()));
    } catch (IOException e) {
      throw new UnreachableException(
          "runtime API " + host + " unreachable on " + request.uri().getPath() + ": " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new UnreachableException("interrupted calling runtime API " + host, e);
    }
  }

  private static Object parse(String body) {
    if (body.isBlank()) {
      return null;
    }
    try {
      return JSON.std.anyFrom(body);
    } catch (IOException e) {
      return Map.of("detail", "unparseable reply");
    }
  }

  private static String json(Map<String, Object> body) {
    try {
      return JSON.std.asString(body);
    } catch (IOException e) {
      throw new IllegalStateException("cannot write a runtime-API request", e);
    }
  }

  /** The list a reply carries, or empty. */
  static List<?> list(Object json) {
    return json instanceof List<?> l ? l : List.of();
  }

  @Override
  public void close() {
    http.close();
  }
}
