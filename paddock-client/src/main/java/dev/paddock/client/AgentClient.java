package dev.paddock.client;

import com.fasterxml.jackson.jr.ob.JSON;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;

/** A client of one sandbox's agent-server: streaming exec, upload, download. Thread-safe. */
public final class AgentClient {
  private final Http http;

  AgentClient(URI agentUrl, String sessionKey) {
    this.http = new Http(agentUrl, "X-Session-API-Key", sessionKey);
  }

  /**
   * Runs {@code command} through the streaming exec route, handing output to the consumers as it
   * arrives (in order per stream); returns the exit code (-1 on timeout).
   */
  public int exec(
      String command, int timeoutSeconds, Consumer<String> stdout, Consumer<String> stderr) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("command", command);
    body.put("timeout", timeoutSeconds);
    HttpRequest request =
        http.request("api/bash/stream")
            .header("Content-Type", "application/json")
            .POST(Http.body(body))
            .build();
    try (InputStream in = http.stream(request);
        BufferedReader lines =
            new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
      String line;
      while ((line = lines.readLine()) != null) {
        Object parsed = JSON.std.anyFrom(line);
        if (!(parsed instanceof Map<?, ?> event)) {
          continue;
        }
        switch (String.valueOf(event.get("type"))) {
          case "stdout" -> stdout.accept(String.valueOf(event.get("data")));
          case "stderr" -> stderr.accept(String.valueOf(event.get("data")));
          case "exit" -> {
            return ((Number) event.get("exit_code")).intValue();
          }
          default -> {}
        }
      }
      throw new PaddockClientException(502, "the stream ended without an exit status");
    } catch (IOException e) {
      throw new PaddockClientException("stream from the sandbox failed: " + e, e);
    }
  }

  /** Uploads a local file to an absolute path in the sandbox (streamed, multipart). */
  public void upload(Path local, String remotePath) {
    String boundary = "paddock-" + UUID.randomUUID();
    String head =
        "--"
            + boundary
            + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\""
            + local.getFileName().toString().replace("\"", "")
            + "\"\r\nContent-Type: application/octet-stream\r\n\r\n";
    String tail = "\r\n--" + boundary + "--\r\n";
    HttpRequest.BodyPublisher publisher;
    try {
      publisher =
          HttpRequest.BodyPublishers.concat(
              HttpRequest.BodyPublishers.ofString(head),
              HttpRequest.BodyPublishers.ofFile(local),
              HttpRequest.BodyPublishers.ofString(tail));
    } catch (IOException e) {
      throw new PaddockClientException("cannot read " + local + ": " + e.getMessage(), e);
    }
    http.object(
        http.request("api/file/upload?path=" + Http.encode(remotePath))
            .header("Content-Type", "multipart/form-data; boundary=" + boundary)
            .POST(publisher)
            .build());
  }

  /** Downloads an absolute path from the sandbox into a local file (streamed). */
  public void download(String remotePath, Path local) {
    HttpRequest request =
        http.request("api/file/download?path=" + Http.encode(remotePath)).GET().build();
    try (InputStream in = http.stream(request)) {
      Path temp = Files.createTempFile(local.toAbsolutePath().getParent(), ".paddock-", ".part");
      try {
        Files.copy(in, temp, StandardCopyOption.REPLACE_EXISTING);
        Files.move(
            temp, local, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
      } finally {
        Files.deleteIfExists(temp);
      }
    } catch (IOException e) {
      throw new PaddockClientException(
          "download of " + remotePath + " failed: " + e.getMessage(), e);
    }
  }
}
