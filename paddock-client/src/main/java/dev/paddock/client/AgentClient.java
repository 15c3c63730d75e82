package dev.paddock.client;

import com.fasterxml.jackson.jr.ob.JSON;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PipedInputStream;
import java.io.PipedOutputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/**
 * A client of one sandbox's agent-server: streaming exec (with stdin), upload, download, and trees
 * copied as tar streams. Thread-safe.
 */
public final class AgentClient {
  private static final int COPY_BUFFER_BYTES = 64 * 1024;
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
    return run(command, timeoutSeconds, Optional.empty(), stdout, stderr);
  }

  /**
   * As {@link #exec(String, int, Consumer, Consumer)}, with {@code stdin} streamed to the command's
   * standard input (closed at its end). Reading {@code stdin} happens on a virtual thread that
   * stops at its end or, once the command has finished, at the next read that returns.
   */
  public int exec(
      String command,
      int timeoutSeconds,
      InputStream stdin,
      Consumer<String> stdout,
      Consumer<String> stderr) {
    return run(command, timeoutSeconds, Optional.of(stdin), stdout, stderr);
  }

  private int run(
      String command,
      int timeoutSeconds,
      Optional<InputStream> stdin,
      Consumer<String> stdout,
      Consumer<String> stderr) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("command", command);
    body.put("timeout", timeoutSeconds);
    stdin.ifPresent(s -> body.put("stdin", true));
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
          case "start" -> stdin.ifPresent(s -> forwardStdin(event.get("command_id"), s));
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

  /**
   * Streams {@code stdin} to the command in one request and closes its input at the end. A command
   * that ends first refuses the rest (409): that is its choice, not an error.
   */
  private void forwardStdin(Object commandId, InputStream stdin) {
    String path = "api/bash/commands/" + Http.encode(String.valueOf(commandId)) + "/stdin?eof=true";
    Thread.ofVirtual()
        .name("paddock-stdin")
        .start(
            () -> {
              try {
                http.send(
                    http.request(path)
                        .POST(HttpRequest.BodyPublishers.ofInputStream(() -> stdin))
                        .build(),
                    HttpResponse.BodyHandlers.discarding());
              } catch (PaddockClientException e) {
                // The command finished or the stream broke: the exit status reports it.
              }
            });
  }

  /** What is at an absolute path in the sandbox (links followed), or empty when nothing is. */
  public Optional<RemoteFile> stat(String remotePath) {
    Map<String, Object> entry;
    try {
      entry =
          http.object(http.request("api/file/stat?path=" + Http.encode(remotePath)).GET().build());
    } catch (PaddockClientException e) {
      if (e.status() == 404) {
        return Optional.empty();
      }
      throw e;
    }
    return Optional.of(
        new RemoteFile(
            String.valueOf(entry.get("path")),
            RemoteFile.Type.fromWire(String.valueOf(entry.get("type"))),
            Integer.parseInt(String.valueOf(entry.get("mode")), 8),
            entry.get("size") instanceof Number n ? n.longValue() : 0));
  }

  /**
   * Copies a local file, link or directory tree into the sandbox directory {@code remoteDir}
   * (created if missing) as {@code name}, or, with an empty {@code name}, a directory's contents
   * into {@code remoteDir}; permission bits, times and links are kept. Streamed as a tar.
   */
  public void uploadTree(Path local, String remoteDir, String name) {
    PipedInputStream body = new PipedInputStream(COPY_BUFFER_BYTES);
    AtomicReference<IOException> failed = new AtomicReference<>();
    Thread writer;
    try {
      PipedOutputStream out = new PipedOutputStream(body);
      writer =
          Thread.ofVirtual()
              .name("paddock-tar")
              .start(
                  () -> {
                    try (out) {
                      LocalTrees.write(local, name, out);
                    } catch (IOException e) {
                      failed.set(e);
                    }
                  });
    } catch (IOException e) {
      throw new PaddockClientException("cannot stream " + local + ": " + e.getMessage(), e);
    }
    try (body) {
      http.object(
          http.request("api/file/upload_tar?path=" + Http.encode(remoteDir))
              .header("Content-Type", "application/x-tar")
              .POST(HttpRequest.BodyPublishers.ofInputStream(() -> body))
              .build());
    } catch (IOException e) {
      throw new PaddockClientException("upload of " + local + " failed: " + e.getMessage(), e);
    } finally {
      join(writer);
    }
    if (failed.get() != null) {
      throw new PaddockClientException(
          "cannot read " + local + ": " + failed.get().getMessage(), failed.get());
    }
  }

  /**
   * Copies the sandbox directory {@code remoteDir} and everything in it to the local directory
   * {@code local} (created; what it holds is merged), keeping permission bits, times and links.
   *
   * @return how many entries were written
   */
  public int downloadTree(String remoteDir, Path local) {
    HttpRequest request =
        http.request("api/file/download_tar?path=" + Http.encode(remoteDir)).GET().build();
    try (InputStream in = http.stream(request)) {
      return LocalTrees.extractStrippingTop(in, local);
    } catch (IOException e) {
      throw new PaddockClientException(
          "download of " + remoteDir + " failed: " + e.getMessage(), e);
    }
  }

  private static void join(Thread thread) {
    try {
      thread.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new PaddockClientException("interrupted", e);
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

  /**
   * Downloads an absolute path from the sandbox into a local file (streamed), with the remote
   * file's permission bits.
   */
  public void download(String remotePath, Path local) {
    HttpRequest request =
        http.request("api/file/download?path=" + Http.encode(remotePath)).GET().build();
    try (InputStream in = http.stream(request)) {
      Path temp = Files.createTempFile(local.toAbsolutePath().getParent(), ".paddock-", ".part");
      try {
        Files.copy(in, temp, StandardCopyOption.REPLACE_EXISTING);
        stat(remotePath)
            .ifPresent(
                f -> {
                  try {
                    Files.setPosixFilePermissions(temp, LocalTrees.permissions(f.mode()));
                  } catch (IOException e) {
                    throw new PaddockClientException("cannot set the mode of " + local, e);
                  }
                });
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
