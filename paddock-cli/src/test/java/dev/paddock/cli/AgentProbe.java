package dev.paddock.cli;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * How the crash tests ask a loopback agent whether a key still opens it. Public, in this module's
 * test-jar, for the suites of {@code paddock-hardening}.
 */
public final class AgentProbe {
  private AgentProbe() {}

  /** Whether an agent on {@code port} runs a command with {@code key}. */
  public static boolean runsCommandWith(HttpClient http, int port, String key)
      throws InterruptedException {
    HttpRequest request =
        HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port + "/api/bash/execute_bash_command"))
            .timeout(Duration.ofSeconds(5))
            .header("X-Session-API-Key", key)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString("{\"command\":\"true\",\"timeout\":5}"))
            .build();
    try {
      return http.send(request, HttpResponse.BodyHandlers.ofString()).statusCode() == 200;
    } catch (IOException e) {
      return false; // nothing listens there any more
    }
  }
}
