package dev.paddock.runtimeapi;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Tells an agent-server which session-key digests to accept ({@code PUT /admin/session-keys} with
 * {@code X-Paddock-Admin-Key}), for the sessions this runtime API keys itself. Only digests travel.
 * Short timeouts: a frozen agent must not hold up a pause. Thread-safe.
 */
final class AgentKeyClient implements AutoCloseable {
  private static final Duration TIMEOUT = Duration.ofSeconds(5);

  private final HttpClient http = HttpClient.newBuilder().connectTimeout(TIMEOUT).build();

  /**
   * @throws IllegalStateException when the agent cannot be reached or refuses
   */
  void rotate(String agentUrl, String adminKey, List<String> digests) {
    String body =
        digests.stream()
            .map(d -> "\"" + d + "\"")
            .collect(Collectors.joining(",", "{\"session_api_key_sha256\":[", "]}"));
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(stripSlash(agentUrl) + "/admin/session-keys"))
            .timeout(TIMEOUT)
            .header("X-Paddock-Admin-Key", adminKey)
            .header("Content-Type", "application/json")
            .PUT(HttpRequest.BodyPublishers.ofString(body))
            .build();
    try {
      HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        throw new IllegalStateException(
            "agent at " + agentUrl + " refused the key rotation: " + response.statusCode());
      }
    } catch (IOException e) {
      throw new IllegalStateException("agent at " + agentUrl + " unreachable: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while rotating keys at " + agentUrl, e);
    }
  }

  private static String stripSlash(String url) {
    return url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
  }

  @Override
  public void close() {
    http.close();
  }
}
