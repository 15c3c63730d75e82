package dev.paddock.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The Docker Engine API spoken directly on its unix socket, one keep-alive connection: the engine's
 * own share of a container start, without the CLI's start-up. Used to split the sandbox create
 * time. Not thread-safe.
 */
final class EngineSocket implements AutoCloseable {
  private static final Pattern ID = Pattern.compile("\"Id\"\\s*:\\s*\"([0-9a-f]{64})\"");

  private final HttpConnection connection;

  private EngineSocket(HttpConnection connection) {
    this.connection = connection;
  }

  static EngineSocket open(Path socket) throws IOException {
    return new EngineSocket(HttpConnection.openUnix(socket, "User-Agent", "paddock-bench"));
  }

  /**
   * Creates (does not start) a container of {@code image} running {@code sleep infinity} on the
   * host's network, labelled {@code label=value}; returns its full id.
   */
  String createSleeper(String image, String label, String value) throws IOException {
    String body =
        "{\"Image\":\""
            + image
            + "\",\"Cmd\":[\"sleep\",\"infinity\"],\"Labels\":{\""
            + label
            + "\":\""
            + value
            + "\"},\"HostConfig\":{\"NetworkMode\":\"host\"}}";
    HttpConnection.Reply reply =
        connection.post("/containers/create", body.getBytes(StandardCharsets.UTF_8));
    Matcher id = ID.matcher(reply.text());
    if (reply.status() != 201 || !id.find()) {
      throw new IllegalStateException(
          "engine refused to create a container: " + reply.status() + " " + reply.text());
    }
    return id.group(1);
  }

  void start(String id) throws IOException {
    HttpConnection.Reply reply = connection.post("/containers/" + id + "/start", new byte[0]);
    if (reply.status() != 204) {
      throw new IllegalStateException(
          "engine refused to start " + id + ": " + reply.status() + " " + reply.text());
    }
  }

  /** Kills and removes the container; a missing one is fine. */
  void remove(String id) throws IOException {
    HttpConnection.Reply reply = connection.delete("/containers/" + id + "?force=1&v=1");
    if (reply.status() != 204 && reply.status() != 404) {
      throw new IllegalStateException(
          "engine refused to remove " + id + ": " + reply.status() + " " + reply.text());
    }
  }

  @Override
  public void close() throws IOException {
    connection.close();
  }
}
