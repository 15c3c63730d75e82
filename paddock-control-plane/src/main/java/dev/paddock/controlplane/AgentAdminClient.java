package dev.paddock.controlplane;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Client of an agent-server's admin route {@code PUT /admin/session-keys}: replaces the session-key
 * digests the agent accepts. Only digests travel; the admin key goes in {@code
 * X-Paddock-Admin-Key}. Short timeouts: a frozen or dead agent must not hold up a pause or delete.
 * Thread-safe.
 */
final class AgentAdminClient implements AutoCloseable {
  static final String ADMIN_KEY_HEADER = "X-Paddock-Admin-Key";
  static final String ROUTE = "/admin/session-keys";

  private final HttpClient http;
  private final Duration timeout;

  AgentAdminClient(Duration timeout) {
    this.timeout = timeout;
    this.http = HttpClient.newBuilder().connectTimeout(timeout).build();
  }

  /**
   * Makes the agent at {@code agentUrl} accept exactly the keys whose SHA-256 hex digests are given
   * (none: it accepts nothing).
   *
   * @throws AgentRotationException when the agent cannot be reached or refuses
   */
  void rotate(String agentUrl, String adminKey, List<String> digests) {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(stripSlash(agentUrl) + ROUTE))
            .timeout(timeout)
            .header(ADMIN_KEY_HEADER, adminKey)
            .header("Content-Type", "application/json")
            .PUT(HttpRequest.BodyPublishers.ofString(body(digests)))
            .build();
    HttpResponse<String> response;
    try {
      response = http.send(request, HttpResponse.BodyHandlers.ofString());
    } catch (IOException e) {
      throw new AgentRotationException("agent at " + agentUrl + " unreachable: " + e, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AgentRotationException("interrupted while rotating keys at " + agentUrl, e);
    }
    if (response.statusCode() != 200) {
      throw new AgentRotationException(
          "agent at " + agentUrl + " answered " + response.statusCode() + ": " + response.body(),
          null);
    }
  }

  /**
   * How long the agent at {@code agentUrl} has had no API call, from its {@code /server_info}
   * {@code idle_time} (no key needed); empty when it cannot tell.
   */
  java.util.Optional<Duration> idleTime(String agentUrl) {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(stripSlash(agentUrl) + "/server_info"))
            .timeout(timeout)
            .GET()
            .build();
    try {
      HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() == 200
          && com.fasterxml.jackson.jr.ob.JSON.std.mapFrom(response.body()).get("idle_time")
              instanceof Number idle) {
        return java.util.Optional.of(Duration.ofMillis((long) (idle.doubleValue() * 1000)));
      }
    } catch (IOException e) {
      // not answering: unknown
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    return java.util.Optional.empty();
  }

  // Digests are 64 hex digits (checked by the agent too), so no JSON escaping is needed.
  private static String body(List<String> digests) {
    return digests.stream()
        .map(d -> "\"" + d + "\"")
        .collect(Collectors.joining(",", "{\"session_api_key_sha256\":[", "]}"));
  }

  private static String stripSlash(String url) {
    return url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
  }

  @Override
  public void close() {
    http.close();
  }

  /** The agent did not take the new key set; the message is for the log (it names the URL). */
  static final class AgentRotationException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    AgentRotationException(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
