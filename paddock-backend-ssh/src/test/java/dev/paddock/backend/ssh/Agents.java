package dev.paddock.backend.ssh;

import com.fasterxml.jackson.jr.ob.JSON;
import dev.paddock.api.ExposedUrl;
import dev.paddock.api.KeyDigest;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeRequest;
import dev.paddock.api.spi.RuntimeState;
import dev.paddock.api.spi.SandboxBackend;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/** Starts sandboxes on a backend and talks to their agents, as the control plane would. */
final class Agents implements AutoCloseable {
  private final HttpClient http = HttpClient.newHttpClient();

  record Sandbox(RuntimeHandle handle, String key) {}

  /** A request for {@code id} with a fresh session key. */
  static Sandbox request(SandboxBackend backend, String id, SandboxSpec spec) {
    String key = UUID.randomUUID().toString();
    RuntimeRequest request =
        new RuntimeRequest(
            id,
            spec,
            Map.of(),
            List.of(KeyDigest.sha256Hex(key)),
            KeyDigest.sha256Hex(UUID.randomUUID().toString()));
    return new Sandbox(backend.start(request), key);
  }

  static Sandbox start(SandboxBackend backend, String id) {
    return request(backend, id, SandboxSpec.builder("ssh-default").build());
  }

  /** The agent URL of a RUNNING sandbox. */
  static String url(SandboxBackend backend, RuntimeHandle handle) {
    RuntimeState state = backend.inspect(handle);
    if (state.status() != SandboxStatus.RUNNING) {
      throw new AssertionError("not running: " + state);
    }
    return state.urls().stream()
        .filter(u -> u.name().equals(ExposedUrl.AGENT_SERVER))
        .findFirst()
        .orElseThrow()
        .url();
  }

  /** Runs {@code command} on the agent and returns its BashOutput JSON. */
  Map<String, Object> exec(String url, String key, String command) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("command", command);
    body.put("timeout", 30);
    try {
      HttpRequest request =
          HttpRequest.newBuilder(URI.create(url + "/api/bash/execute_bash_command"))
              .timeout(Duration.ofSeconds(60))
              .header("Content-Type", "application/json")
              .header("X-Session-API-Key", key)
              .POST(HttpRequest.BodyPublishers.ofString(JSON.std.asString(body)))
              .build();
      HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        throw new AssertionError("exec answered " + response.statusCode() + ": " + response.body());
      }
      return JSON.std.mapFrom(response.body());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }

  static String stdout(Map<String, Object> result) {
    return String.valueOf(result.get("stdout"));
  }

  @Override
  public void close() {
    http.close();
  }
}
