package dev.paddock.client;

import com.fasterxml.jackson.jr.ob.JSON;
import java.io.IOException;
import java.io.InputStream;
import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** JSON over java.net.http with error bodies turned into {@link PaddockClientException}. */
final class Http {
  private static final JSON JSON_STD = JSON.std;

  private final HttpClient client =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();
  private final URI base;
  private final String headerName;
  private final String headerValue;

  Http(URI base, String headerName, String headerValue) {
    // Relative paths resolve under the base, also when it has a path of its own (an agent behind
    // the gateway lives at /sandboxes/{id}/agent): without the slash its last segment would go.
    String path = base.getRawPath();
    this.base = path == null || path.endsWith("/") ? base : URI.create(base + "/");
    this.headerName = headerName;
    this.headerValue = headerValue;
  }

  /** How long one request may take, unless a call stretches it. */
  static final Duration TIMEOUT = Duration.ofMinutes(15);

  HttpRequest.Builder request(String pathAndQuery) {
    return HttpRequest.newBuilder(base.resolve(pathAndQuery))
        .timeout(TIMEOUT)
        .header(headerName, headerValue);
  }

  Object json(HttpRequest request) {
    HttpResponse<byte[]> response = send(request, HttpResponse.BodyHandlers.ofByteArray());
    check(response.statusCode(), response.body());
    try {
      return response.body().length == 0 ? Map.of() : JSON_STD.anyFrom(response.body());
    } catch (IOException e) {
      throw new PaddockClientException("malformed JSON from " + request.uri(), e);
    }
  }

  @SuppressWarnings("unchecked")
  Map<String, Object> object(HttpRequest request) {
    return (Map<String, Object>) json(request);
  }

  @SuppressWarnings("unchecked")
  List<Object> list(HttpRequest request) {
    return (List<Object>) json(request);
  }

  /** A streamed reply; the caller closes the stream. Non-2xx replies become exceptions. */
  InputStream stream(HttpRequest request) {
    HttpResponse<InputStream> response = send(request, HttpResponse.BodyHandlers.ofInputStream());
    if (response.statusCode() / 100 != 2) {
      try (InputStream in = response.body()) {
        check(response.statusCode(), in.readAllBytes());
      } catch (IOException e) {
        throw new PaddockClientException(response.statusCode(), "HTTP " + response.statusCode());
      }
    }
    return response.body();
  }

  <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler) {
    try {
      return client.send(request, handler);
    } catch (ConnectException e) {
      throw new PaddockClientException("cannot reach " + base + " (is it running?)", e);
    } catch (IOException e) {
      throw new PaddockClientException("request to " + request.uri() + " failed: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new PaddockClientException("interrupted", e);
    }
  }

  static HttpRequest.BodyPublisher body(Object value) {
    try {
      return HttpRequest.BodyPublishers.ofByteArray(JSON_STD.asBytes(value));
    } catch (IOException e) {
      throw new IllegalArgumentException("cannot serialise " + value, e);
    }
  }

  private static void check(int status, byte[] body) {
    if (status / 100 == 2) {
      return;
    }
    String detail = new String(body, StandardCharsets.UTF_8);
    try {
      Object parsed = JSON_STD.anyFrom(body);
      if (parsed instanceof Map<?, ?> map && map.get("detail") != null) {
        detail = String.valueOf(map.get("detail"));
      }
    } catch (IOException | RuntimeException e) {
      // Not JSON: keep the raw text.
    }
    throw new PaddockClientException(status, detail);
  }

  static String encode(String value) {
    return java.net.URLEncoder.encode(value, StandardCharsets.UTF_8);
  }
}
