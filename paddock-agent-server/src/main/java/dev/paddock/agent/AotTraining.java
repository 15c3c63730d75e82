package dev.paddock.agent;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;

/**
 * The client side of the training run behind the AOT cache (JDK 24+) or AppCDS archive (JDK 21-23)
 * that the build writes (src/main/sh/train-aot.sh): the script starts a real agent-server with the
 * cache output option, this class drives its hot routes (health, commands, sessions, streams, event
 * search, error replies) over raw sockets from another JVM, and the script then stops the server
 * with SIGTERM, which writes the cache.
 *
 * <p>Training in a separate server process matters: every class in the cache is loaded at start-up,
 * and a cache trained in-process (server and driver in one JVM) was measured to add 8 MiB of idle
 * RSS per sandbox. File, archive and git routes are left out for the same reason; they load on
 * first use.
 *
 * <p>Usage: {@code java -cp paddock-agent-server-all.jar dev.paddock.agent.AotTraining PORT KEY
 * WORKSPACE}.
 */
final class AotTraining {
  private AotTraining() {}

  public static void main(String[] args) throws IOException {
    exercise(Integer.parseInt(args[0]), args[1], Path.of(args[2]));
  }

  private static void exercise(int port, String key, Path workspace) throws IOException {
    for (String path : List.of("/alive", "/health", "/ready", "/server_info")) {
      request(port, key, "GET", path, null, false);
    }
    String file = workspace.resolve("hello.txt").toString();
    for (int i = 0; i < 20; i++) {
      request(port, key, "POST", "/api/bash/execute_bash_command", "{\"command\":\"true\"}", true);
      request(
          port,
          key,
          "POST",
          "/api/bash/execute_bash_command",
          "{\"command\":\"echo hi\",\"session\":\"train\"}",
          true);
    }
    request(
        port,
        key,
        "POST",
        "/api/bash/execute_bash_command",
        "{\"command\":\"echo x > " + file + "; ls\"}",
        true);
    request(port, key, "POST", "/api/bash/stream", "{\"command\":\"seq 1 1000\"}", true);
    request(
        port, key, "POST", "/api/bash/start_bash_command", "{\"command\":\"echo started\"}", true);
    request(port, key, "GET", "/api/bash/bash_events/search?limit=100", null, true);
    request(port, key, "GET", "/api/sessions", null, true);
    request(port, key, "POST", "/api/bash/execute_bash_command", "{not json", true);
    request(port, key, "POST", "/api/bash/execute_bash_command", "{\"command\":1}", true);
    request(port, key, "GET", "/api/bash/bash_events/search", null, false);
    request(port, key, "GET", "/no/such/route", null, true);
  }

  /** One HTTP/1.1 request on its own connection; the response is read to the end and dropped. */
  private static void request(
      int port, String key, String method, String path, String json, boolean auth)
      throws IOException {
    try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port)) {
      byte[] body = json == null ? new byte[0] : json.getBytes(StandardCharsets.UTF_8);
      StringBuilder head = new StringBuilder();
      head.append(method).append(' ').append(path).append(" HTTP/1.1\r\n");
      head.append("Host: 127.0.0.1\r\nConnection: close\r\n");
      if (auth) {
        head.append("X-Session-API-Key: ").append(key).append("\r\n");
      }
      if (json != null) {
        head.append("Content-Type: application/json\r\n");
      }
      head.append("Content-Length: ").append(body.length).append("\r\n\r\n");
      OutputStream out = socket.getOutputStream();
      out.write(head.toString().getBytes(StandardCharsets.US_ASCII));
      out.write(body);
      out.flush();
      InputStream in = socket.getInputStream();
      in.transferTo(new ByteArrayOutputStream());
    }
  }
}
