package dev.paddock.bench;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

/**
 * The requests the bench sends to an agent, each checked for success so a failing agent cannot pass
 * for a fast one.
 */
final class AgentCalls {
  static final String EXECUTE = "/api/bash/execute_bash_command";
  static final String STREAM = "/api/bash/stream";

  private static final JsonFactory JSON = new JsonFactory();

  private AgentCalls() {}

  /** The request body running {@code command}, in {@code session} when not null. */
  static byte[] commandBody(String command, String session) {
    String json = "{\"command\":" + quote(command);
    if (session != null) {
      json += ",\"session\":" + quote(session);
    }
    return (json + "}").getBytes(StandardCharsets.UTF_8);
  }

  private static String quote(String text) {
    return "\"" + text.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
  }

  /** Runs a prepared execute request; fails unless the agent answered 200. */
  static void execute(HttpConnection connection, byte[] body) throws IOException {
    HttpConnection.Reply reply = connection.post(EXECUTE, body);
    if (reply.status() != 200) {
      throw new IllegalStateException(
          "execute_bash_command answered " + reply.status() + ": " + reply.text());
    }
  }

  /** Runs a prepared execute request and checks the command itself exited 0. */
  static void executeChecked(HttpConnection connection, byte[] body) throws IOException {
    HttpConnection.Reply reply = connection.post(EXECUTE, body);
    if (reply.status() != 200 || !reply.text().contains("\"exit_code\":0")) {
      throw new IllegalStateException(
          "execute_bash_command answered " + reply.status() + ": " + reply.text());
    }
  }

  /** GET {@code path}; fails unless 200. */
  static void get(HttpConnection connection, String path) throws IOException {
    HttpConnection.Reply reply = connection.get(path);
    if (reply.status() != 200) {
      throw new IllegalStateException(path + " answered " + reply.status() + ": " + reply.text());
    }
  }

  /**
   * Streams {@code command} and reads every NDJSON line with a streaming parser, as a client would;
   * returns the characters of stdout received and fails unless the exit line says 0.
   */
  static long stream(HttpConnection connection, String command) throws IOException {
    return stream(connection, "", command);
  }

  /** {@link #stream(HttpConnection, String)} with the agent's routes under {@code prefix}. */
  static long stream(HttpConnection connection, String prefix, String command) throws IOException {
    HttpConnection.StreamedReply reply =
        connection.postStreaming(prefix + STREAM, commandBody(command, null));
    try (InputStream body = reply.body()) {
      if (reply.status() != 200) {
        throw new IllegalStateException(
            "stream answered "
                + reply.status()
                + ": "
                + new String(body.readAllBytes(), StandardCharsets.UTF_8));
      }
      return stdoutChars(body, command);
    }
  }

  private static long stdoutChars(InputStream body, String command) throws IOException {
    long chars = 0;
    Integer exit = null;
    try (JsonParser parser = JSON.createParser(body)) {
      for (JsonToken t = parser.nextToken(); t != null; t = parser.nextToken()) {
        if (t != JsonToken.FIELD_NAME) {
          continue;
        }
        String field = parser.currentName();
        parser.nextToken();
        if (field.equals("data")) {
          chars += parser.getTextLength();
        } else if (field.equals("exit_code")) {
          exit = parser.getIntValue();
        }
      }
    }
    if (exit == null || exit != 0) {
      throw new IllegalStateException(
          "streamed command '" + command + "' ended with exit code " + exit);
    }
    return chars;
  }
}
