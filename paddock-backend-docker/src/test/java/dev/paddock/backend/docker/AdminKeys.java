package dev.paddock.backend.docker;

import dev.paddock.api.KeyDigest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

/** Hands an agent a session key through its admin route, as the control plane does on resume. */
final class AdminKeys {
  private AdminKeys() {}

  static void rotate(String agentUrl, String adminKey, String sessionKey) {
    try (HttpClient http = HttpClient.newHttpClient()) {
      HttpRequest request =
          HttpRequest.newBuilder(URI.create(agentUrl + "/admin/session-keys"))
              .header("X-Paddock-Admin-Key", adminKey)
              .header("Content-Type", "application/json")
              .PUT(
                  HttpRequest.BodyPublishers.ofString(
                      "{\"session_api_key_sha256\":[\"" + KeyDigest.sha256Hex(sessionKey) + "\"]}"))
              .build();
      HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() / 100 != 2) {
        throw new AssertionError(
            "rotation answered " + response.statusCode() + ": " + response.body());
      }
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }
}
