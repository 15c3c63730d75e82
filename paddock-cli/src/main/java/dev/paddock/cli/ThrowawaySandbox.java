package dev.paddock.cli;

import com.fasterxml.jackson.jr.ob.JSON;
import dev.paddock.api.ExposedUrl;
import dev.paddock.api.KeyDigest;
import dev.paddock.api.spi.HostCheck;
import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeRequest;
import dev.paddock.api.spi.RuntimeStartException;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.api.spi.SandboxBackendProvider;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;

/**
 * {@code paddock doctor}'s end-to-end check: the backend starts a sandbox of the default spec (id
 * {@code doctor-<random>}), its agent runs {@code echo}, and the sandbox is destroyed whatever
 * happened. A failed start is reported with its class and a fix for that class.
 */
final class ThrowawaySandbox {
  private static final String NAME = "throwaway sandbox";
  private static final String MARKER = "paddock-doctor-ok";
  private static final SecureRandom RANDOM = new SecureRandom();

  private ThrowawaySandbox() {}

  static HostCheck run(SandboxBackendProvider provider, Map<String, String> settings) {
    SandboxBackend backend;
    try {
      backend = provider.create(settings);
    } catch (RuntimeException e) {
      return HostCheck.fail(NAME, "the backend cannot be created: " + e.getMessage(), "see above");
    }
    try (backend) {
      return startAndRun(backend, provider, settings);
    }
  }

  private static HostCheck startAndRun(
      SandboxBackend backend, SandboxBackendProvider provider, Map<String, String> settings) {
    String key = secret();
    RuntimeRequest request =
        new RuntimeRequest(
            "doctor-" + HexFormat.of().formatHex(RANDOM.generateSeed(4)),
            provider.specs(settings).defaultSpec(),
            Map.of(),
            List.of(KeyDigest.sha256Hex(key)),
            KeyDigest.sha256Hex(secret()));
    long began = System.nanoTime();
    RuntimeHandle handle;
    try {
      handle = backend.start(request);
    } catch (RuntimeStartException e) {
      return startFailed(e.failure());
    } catch (RuntimeException e) {
      return HostCheck.fail(NAME, "start failed: " + e, "see the message; then paddock doctor");
    }
    try {
      long startMillis = Duration.ofNanos(System.nanoTime() - began).toMillis();
      return runCommand(backend, handle, key, startMillis);
    } finally {
      backend.destroy(handle);
    }
  }

  private static HostCheck runCommand(
      SandboxBackend backend, RuntimeHandle handle, String key, long startMillis) {
    String url =
        backend.inspect(handle).urls().stream()
            .filter(u -> u.name().equals(ExposedUrl.AGENT_SERVER))
            .map(ExposedUrl::url)
            .findFirst()
            .orElse("");
    if (url.isEmpty()) {
      return HostCheck.fail(NAME, "started, but exposes no agent URL", "report this as a bug");
    }
    try {
      String output = exec(url, key);
      if (!output.contains(MARKER)) {
        return HostCheck.fail(
            NAME, "the command printed '" + output.strip() + "'", "check the image's /bin/sh");
      }
      return HostCheck.ok(
          NAME,
          "started in "
              + startMillis
              + " ms and ran a command ("
              + handle.sandboxId()
              + ", removed)");
    } catch (IOException e) {
      return HostCheck.fail(
          NAME, "started, but the command failed: " + e.getMessage(), "see the server log");
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return HostCheck.fail(NAME, "interrupted", "");
    }
  }

  /** Runs {@code echo} through the agent's streaming exec route; returns its standard output. */
  private static String exec(String agentUrl, String key) throws IOException, InterruptedException {
    byte[] body = JSON.std.asBytes(Map.of("command", "echo " + MARKER, "timeout", 30));
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(agentUrl.replaceAll("/$", "") + "/api/bash/stream"))
            .header("X-Session-API-Key", key)
            .header("Content-Type", "application/json")
            .timeout(Duration.ofSeconds(60))
            .POST(HttpRequest.BodyPublishers.ofByteArray(body))
            .build();
    try (HttpClient client = HttpClient.newHttpClient()) {
      HttpResponse<InputStream> response =
          client.send(request, HttpResponse.BodyHandlers.ofInputStream());
      StringBuilder stdout = new StringBuilder();
      try (BufferedReader lines =
          new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
        if (response.statusCode() != 200) {
          throw new IOException("the agent answered " + response.statusCode());
        }
        for (String line = lines.readLine(); line != null; line = lines.readLine()) {
          if (JSON.std.anyFrom(line) instanceof Map<?, ?> event
              && "stdout".equals(event.get("type"))) {
            stdout.append(event.get("data"));
          }
        }
      }
      return stdout.toString();
    }
  }

  private static HostCheck startFailed(RuntimeFailure failure) {
    String detail =
        failure.kind().id() + ": " + failure.safeMessage() + " " + firstLine(failure.rawDetail());
    return HostCheck.fail(NAME, detail, fix(failure.kind()));
  }

  private static final Map<RuntimeFailure.Kind, String> FIXES =
      Map.ofEntries(
          Map.entry(RuntimeFailure.Kind.IMAGE_MISSING, "build the image: ./paddock docker-image"),
          Map.entry(
              RuntimeFailure.Kind.IMAGE_WRONG_ARCHITECTURE,
              "rebuild the image on this host (./paddock docker-image) or use one for its"
                  + " architecture"),
          Map.entry(
              RuntimeFailure.Kind.IMAGE_UNSUITABLE,
              "use an image with glibc and /bin/sh (./paddock docker-image)"),
          Map.entry(
              RuntimeFailure.Kind.DISK_FULL, "free disk under the data dir and the engine's root"),
          Map.entry(
              RuntimeFailure.Kind.ENGINE_UNREACHABLE,
              "start the engine, or correct docker.host / DOCKER_HOST"),
          Map.entry(
              RuntimeFailure.Kind.BINARY_MISSING,
              "build Paddock (./paddock build) and check the JDK"),
          Map.entry(
              RuntimeFailure.Kind.OUT_OF_MEMORY,
              "raise the sandbox memory limit or free host memory"),
          Map.entry(
              RuntimeFailure.Kind.PORT_TAKEN,
              "free the agent's port range, or use docker.network=bridge"),
          Map.entry(
              RuntimeFailure.Kind.CALLBACK_UNREACHABLE,
              "make docker.callback-url reachable from sandboxes"));

  /**
   * What to do about a failed start of {@code kind}; kinds without a specific fix (a backend's own,
   * EXITED, NEVER_READY, ...) point at the detail and the log.
   */
  static String fix(RuntimeFailure.Kind kind) {
    return FIXES.getOrDefault(kind, "read the raw detail above and the server log");
  }

  /** The raw detail on one line, shortened: the operator's own host, so it may be shown. */
  private static String firstLine(String text) {
    String line = String.join(" | ", text.lines().map(String::strip).toList());
    return line.length() > 400 ? line.substring(0, 400) + "..." : line;
  }

  private static String secret() {
    byte[] bytes = new byte[32];
    RANDOM.nextBytes(bytes);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }
}
