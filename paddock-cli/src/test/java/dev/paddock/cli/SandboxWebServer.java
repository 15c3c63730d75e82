package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.SandboxInfo;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.awaitility.Awaitility;

/**
 * A tiny web server ({@code Listener.java}, run by this JVM's own {@code java}, so nothing else
 * need be on the sandbox's PATH) started inside a sandbox as a running command of its agent,
 * through the gateway: it stays in the agent's process tree until the sandbox is deleted. It
 * answers every request with 200 and a given text.
 */
final class SandboxWebServer {
  private SandboxWebServer() {}

  /** Starts the server in {@code sandbox}; returns the loopback port it listens on. */
  static int start(HttpClient http, SandboxInfo sandbox, Path dir, String text) throws Exception {
    Path source = dir.resolve("Listener.java");
    if (!Files.exists(source)) {
      try (InputStream in = SandboxWebServer.class.getResourceAsStream("Listener.java")) {
        Files.write(source, in.readAllBytes());
      }
    }
    Path portFile = dir.resolve("port-" + sandbox.id());
    String java = ProcessHandle.current().info().command().orElseThrow();
    String command = "exec '" + java + "' '" + source + "' '" + portFile + "' '" + text + "'";
    HttpResponse<String> started =
        http.send(
            HttpRequest.newBuilder(
                    URI.create(
                        sandbox.agentServerUrl().orElseThrow() + "/api/bash/start_bash_command"))
                .timeout(Duration.ofSeconds(30))
                .header("X-Session-API-Key", sandbox.sessionApiKey().orElseThrow())
                .header("Content-Type", "application/json")
                .POST(
                    HttpRequest.BodyPublishers.ofString(
                        dev.paddock.http.Json.string(Map.of("command", command))))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(started.statusCode()).as(started.body()).isEqualTo(200);
    Awaitility.await("the web server in " + sandbox.id() + " listens")
        .atMost(Duration.ofSeconds(60))
        .until(() -> Files.exists(portFile));
    return Integer.parseInt(Files.readString(portFile).strip());
  }
}
