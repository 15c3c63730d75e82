package dev.paddock.backend.kit.protocol;

import com.fasterxml.jackson.jr.ob.JSON;
import dev.paddock.api.spi.AgentCallException;
import dev.paddock.api.spi.SandboxAgent;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * {@link HttpAgents#at}: one agent over HTTP, with the admin key; or ({@link
 * HttpAgents#launchKeyed}) an image's own agent-server, with its session key and the workspace's
 * path on archive calls (OpenHands' {@code /api/file/archive} requires it).
 */
final class HttpAgent implements SandboxAgent {
  private final HttpClient http;
  private final Duration timeout;
  private final String base;
  private final String header;
  private final String key;
  private final Optional<String> workspace;

  HttpAgent(
      HttpClient http,
      Duration timeout,
      String base,
      String header,
      String key,
      Optional<String> workspace) {
    this.http = http;
    this.timeout = timeout;
    this.base = base;
    this.header = header;
    this.key = key;
    this.workspace = workspace;
  }

  @Override
  public void replaceSessionKeys(List<String> digests) {
    if (!header.equals(AgentProtocol.ADMIN_KEY_HEADER)) {
      throw new AgentCallException(
          "the agent at " + base + " came with its image and takes its session key at launch only");
    }
    digests.forEach(AgentSecrets::checkedDigest);
    HttpRequest request =
        admin(AgentProtocol.SESSION_KEYS, timeout)
            .header("Content-Type", "application/json")
            .PUT(HttpRequest.BodyPublishers.ofString(json(digests)))
            .build();
    HttpResponse<String> response = send(request, HttpResponse.BodyHandlers.ofString());
    if (response.statusCode() != 200) {
      throw new AgentCallException(
          "agent at " + base + " answered " + response.statusCode() + ": " + response.body());
    }
  }

  @Override
  public Optional<Archive> openArchive(String format, boolean defaultExcludes, Duration timeout) {
    String query = "?format=" + format + (defaultExcludes ? "" : "&use_default_excludes=false");
    query += workspace.map(p -> "&path=" + URLEncoder.encode(p, StandardCharsets.UTF_8)).orElse("");
    HttpRequest request = admin(AgentProtocol.ARCHIVE + query, timeout).GET().build();
    HttpResponse<InputStream> response = send(request, HttpResponse.BodyHandlers.ofInputStream());
    int status = response.statusCode();
    if (status == 200) {
      return Optional.of(new Archive(response.body(), repository(response)));
    }
    closeQuietly(response.body());
    if (status == 400) {
      return Optional.empty(); // nothing in that format (e.g. no repository for git-delta)
    }
    if (status == 404 || status == 405) {
      throw new AgentCallException(
          "the agent at " + base + " has no " + AgentProtocol.ARCHIVE + " route (" + status + ")");
    }
    throw new AgentCallException(
        "agent at " + base + " answered " + status + " to the " + format + " archive request");
  }

  @Override
  public Optional<Map<String, Object>> environment(Duration timeout) {
    HttpRequest request = admin(AgentProtocol.ENVIRONMENT, timeout).GET().build();
    try {
      HttpResponse<byte[]> response = send(request, HttpResponse.BodyHandlers.ofByteArray());
      if (response.statusCode() != 200) {
        return Optional.empty();
      }
      Map<String, Object> body = JSON.std.mapFrom(response.body());
      Map<String, Object> environment = new TreeMap<>();
      environment.put("os", body.get("os") instanceof String os ? os : null);
      environment.put(
          "runtimes", body.get("runtimes") instanceof Map<?, ?> m ? new TreeMap<>(m) : Map.of());
      return Optional.of(environment);
    } catch (IOException | AgentCallException e) {
      return Optional.empty();
    }
  }

  @Override
  public Optional<Duration> idleTime() {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(base + AgentProtocol.SERVER_INFO))
            .timeout(timeout)
            .GET()
            .build();
    try {
      HttpResponse<String> response = send(request, HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() == 200
          && JSON.std.mapFrom(response.body()).get("idle_time") instanceof Number idle) {
        return Optional.of(Duration.ofMillis((long) (idle.doubleValue() * 1000)));
      }
    } catch (IOException | AgentCallException e) {
      // not answering: unknown
    }
    return Optional.empty();
  }

  private HttpRequest.Builder admin(String route, Duration timeout) {
    return HttpRequest.newBuilder(URI.create(base + route)).timeout(timeout).header(header, key);
  }

  private <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> body) {
    try {
      return http.send(request, body);
    } catch (IOException e) {
      throw new AgentCallException("agent at " + base + " unreachable: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AgentCallException("interrupted while calling the agent at " + base, e);
    }
  }

  // Digests are checked 64 hex digits, so no JSON escaping is needed.
  private static String json(List<String> digests) {
    StringBuilder body = new StringBuilder("{\"" + AgentProtocol.SESSION_KEYS_FIELD + "\":[");
    for (int i = 0; i < digests.size(); i++) {
      body.append(i == 0 ? "" : ",").append('"').append(digests.get(i)).append('"');
    }
    return body.append("]}").toString();
  }

  // The agent percent-encodes every X-Archive-* value; '+' is a plus, not a space.
  private static Map<String, String> repository(HttpResponse<?> response) {
    Map<String, String> fields = new TreeMap<>();
    AgentProtocol.ARCHIVE_HEADERS.forEach(
        (header, field) ->
            response
                .headers()
                .firstValue(header)
                .filter(v -> !v.isEmpty())
                .map(v -> URLDecoder.decode(v.replace("+", "%2B"), StandardCharsets.UTF_8))
                .ifPresent(v -> fields.put(field, v)));
    return fields;
  }

  private static void closeQuietly(InputStream body) {
    try {
      body.close();
    } catch (IOException e) {
      // nothing was read from it; the connection is dropped either way
    }
  }
}
