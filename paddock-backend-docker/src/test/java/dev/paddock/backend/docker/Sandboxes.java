package dev.paddock.backend.docker;

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
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Sandboxes started straight on a backend (no control plane) for the backend's own tests: each with
 * a fresh session key the test knows, and a client of its agent. Closing destroys them all.
 */
final class Sandboxes implements AutoCloseable {
  private static final SecureRandom RANDOM = new SecureRandom();

  private final SandboxBackend backend;
  private final HttpClient http =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final List<RuntimeHandle> started = new ArrayList<>();

  Sandboxes(SandboxBackend backend) {
    this.backend = backend;
  }

  /** A started sandbox: its handle and the session key its agent accepts. */
  record Sandbox(RuntimeHandle handle, String key, String adminKey) {
    String container() {
      return handle.attributes().get("container");
    }
  }

  static String newKey() {
    byte[] bytes = new byte[32];
    RANDOM.nextBytes(bytes);
    return HexFormat.of().formatHex(bytes);
  }

  static RuntimeRequest request(String id, SandboxSpec spec, String key, String adminKey) {
    return new RuntimeRequest(
        id, spec, Map.of(), List.of(KeyDigest.sha256Hex(key)), KeyDigest.sha256Hex(adminKey));
  }

  Sandbox start(String id, SandboxSpec spec) {
    String key = newKey();
    String admin = newKey();
    RuntimeHandle handle = backend.start(request(id, spec, key, admin));
    started.add(handle);
    return new Sandbox(handle, key, admin);
  }

  SandboxBackend backend() {
    return backend;
  }

  /** Remembers a handle made elsewhere (a resumed one) so close() destroys it too. */
  void track(RuntimeHandle handle) {
    started.add(handle);
  }

  String url(RuntimeHandle handle) {
    RuntimeState state = backend.inspect(handle);
    if (state.status() != SandboxStatus.RUNNING) {
      throw new AssertionError(
          "sandbox " + handle.sandboxId() + " is " + state.status() + " " + state.failure());
    }
    return state.urls().stream()
        .filter(u -> u.name().equals(ExposedUrl.AGENT_SERVER))
        .findFirst()
        .orElseThrow()
        .url();
  }

  /** Runs {@code command} and returns the agent's BashOutput JSON. */
  Map<String, Object> exec(Sandbox sandbox, String command, int timeoutSeconds) {
    return exec(sandbox.handle(), sandbox.key(), command, timeoutSeconds);
  }

  Map<String, Object> exec(RuntimeHandle handle, String key, String command, int timeoutSeconds) {
    return exec(url(handle), key, command, timeoutSeconds);
  }

  /** Runs {@code command} on the agent at {@code url} and returns its BashOutput JSON. */
  Map<String, Object> exec(String url, String key, String command, int timeoutSeconds) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("command", command);
    body.put("timeout", timeoutSeconds);
    try {
      HttpRequest request =
          HttpRequest.newBuilder(URI.create(url + "/api/bash/execute_bash_command"))
              .timeout(Duration.ofSeconds(timeoutSeconds + 30L))
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

  static int exitCode(Map<String, Object> result) {
    Object code = result.get("exit_code");
    return code instanceof Number n ? n.intValue() : Integer.MIN_VALUE;
  }

  @Override
  public void close() {
    RuntimeException failure = null;
    for (RuntimeHandle handle : started) {
      try {
        backend.destroy(handle);
      } catch (RuntimeException e) {
        if (failure == null) {
          failure = e;
        } else {
          failure.addSuppressed(e);
        }
      }
    }
    http.close();
    if (failure != null) {
      throw failure;
    }
  }

  /** A tar of {@code dir} (for {@code docker import}), made by the system's tar. */
  static byte[] tar(Path dir) {
    try {
      Process tar =
          new ProcessBuilder("tar", "-C", dir.toString(), "-c", ".")
              .redirectError(ProcessBuilder.Redirect.DISCARD)
              .start();
      byte[] bytes = tar.getInputStream().readAllBytes();
      if (tar.waitFor() != 0) {
        throw new AssertionError("tar failed");
      }
      return bytes;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AssertionError("interrupted", e);
    }
  }

  /** Imports {@code dir} as image {@code name} (repo:tag) into the engine. */
  static void importImage(DockerEngine engine, Path dir, String name) {
    int colon = name.lastIndexOf(':');
    var response =
        engine.call(
            "POST",
            "/images/create?fromSrc=-&repo="
                + name.substring(0, colon)
                + "&tag="
                + name.substring(colon + 1),
            tar(dir),
            "application/x-tar");
    if (!response.ok() || response.text().contains("\"error\"")) {
      throw new AssertionError("import failed: " + response.text());
    }
  }

  static Path tempDir(String prefix) {
    try {
      return Files.createTempDirectory(prefix);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
