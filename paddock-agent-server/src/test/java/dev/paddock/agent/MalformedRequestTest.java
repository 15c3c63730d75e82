package dev.paddock.agent;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Bad requests get a precise 4xx with a JSON detail: never a 500, never a hang. */
class MalformedRequestTest {
  private static final int JSON_LIMIT = 2048;
  private static final String EXECUTE = "/api/bash/execute_bash_command";

  @RegisterExtension final AgentFixture agent = new AgentFixture(b -> b.maxJsonBytes(JSON_LIMIT));

  private HttpResponse<String> post(String path, String body) throws Exception {
    return agent.send(
        agent
            .request(path)
            .timeout(Duration.ofSeconds(10))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build());
  }

  private void assertRefused(String path, String body, int status) throws Exception {
    HttpResponse<String> response = post(path, body);
    assertThat(response.statusCode()).as(body + " -> " + response.body()).isEqualTo(status);
    assertThat(response.headers().firstValue("Content-Type")).hasValue("application/json");
    assertThat(AgentFixture.json(response)).containsKey("detail");
  }

  @Test
  void invalidJsonIs400MalformedJson() throws Exception {
    for (String body : List.of("{", "{\"command\": }", "not json", "{'command': 'ls'}")) {
      HttpResponse<String> response = post(EXECUTE, body);
      assertThat(response.statusCode()).as(body).isEqualTo(400);
      assertThat((String) AgentFixture.json(response).get("detail")).contains("malformed JSON");
    }
  }

  @Test
  void aBodyThatIsNotAnObjectIs422() throws Exception {
    assertRefused(EXECUTE, "[\"echo hi\"]", 422);
    assertRefused(EXECUTE, "\"echo hi\"", 422);
    assertRefused(EXECUTE, "42", 422);
    assertRefused(EXECUTE, "", 422);
  }

  @Test
  void wrongFieldTypesAre422() throws Exception {
    for (String body :
        List.of(
            "{\"command\":\"ls\",\"timeout\":\"5\"}",
            "{\"command\":\"ls\",\"timeout\":1.5}",
            "{\"command\":\"ls\",\"timeout\":0}",
            "{\"command\":\"ls\",\"timeout\":-3}",
            "{\"command\":\"ls\",\"timeout\":1e300}",
            "{\"command\":\"ls\",\"timeout\":true}",
            "{\"command\":42}",
            "{\"command\":[\"ls\"]}",
            "{\"command\":\"ls\",\"cwd\":7}",
            "{\"command\":\"ls\",\"env\":[\"A=1\"]}",
            "{\"command\":\"ls\",\"env\":{\"A\":1}}",
            "{\"command\":\"ls\",\"session\":{}}")) {
      assertRefused(EXECUTE, body, 422);
    }
    assertRefused("/api/bash/start_bash_command", "{\"command\":\"ls\",\"stdin\":\"yes\"}", 422);
  }

  @Test
  void anUnknownFieldIs422() throws Exception {
    HttpResponse<String> response = post(EXECUTE, "{\"command\":\"ls\",\"timout\":5}");
    assertThat(response.statusCode()).isEqualTo(422);
    assertThat((String) AgentFixture.json(response).get("detail")).contains("timout");
    assertRefused(EXECUTE, "{\"command\":\"cat\",\"stdin\":true}", 422);
  }

  @Test
  void aMissingOrBlankCommandIs422() throws Exception {
    assertRefused(EXECUTE, "{}", 422);
    assertRefused(EXECUTE, "{\"command\":null}", 422);
    assertRefused(EXECUTE, "{\"command\":\"\"}", 422);
    assertRefused(EXECUTE, "{\"command\":\"  \\n\\t\"}", 422);
    assertRefused("/api/bash/start_bash_command", "{\"cwd\":\"/\"}", 422);
  }

  @Test
  void tooDeeplyNestedJsonIsRefused() throws Exception {
    String deep = "[".repeat(500) + "]".repeat(500);
    HttpResponse<String> response = post(EXECUTE, "{\"command\":" + deep + "}");
    assertThat(response.statusCode()).isBetween(400, 499);
  }

  @Test
  void aBodyOverTheJsonLimitIs413() throws Exception {
    String big = BashClient.body("command", "echo " + "x".repeat(JSON_LIMIT));
    assertRefused(EXECUTE, big, 413);
  }

  @Test
  void aChunkedBodyOverTheJsonLimitIs413() throws Exception {
    byte[] big =
        BashClient.body("command", "echo " + "x".repeat(4 * JSON_LIMIT))
            .getBytes(StandardCharsets.UTF_8);
    HttpResponse<String> response =
        agent.send(
            agent
                .request(EXECUTE)
                .timeout(Duration.ofSeconds(10))
                .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(big)))
                .build());
    assertThat(response.statusCode()).isEqualTo(413);
  }

  @Test
  void aVeryLargeBodyIsRefusedWithoutAHang() throws Exception {
    byte[] huge = new byte[8 << 20];
    java.util.Arrays.fill(huge, (byte) 'x');
    HttpResponse<String> response;
    try {
      response =
          agent.send(
              agent
                  .request(EXECUTE)
                  .timeout(Duration.ofSeconds(10))
                  .POST(HttpRequest.BodyPublishers.ofByteArray(huge))
                  .build());
    } catch (java.io.IOException e) {
      // The server may close the connection before the client has sent everything.
      response = null;
    }
    if (response != null) {
      assertThat(response.statusCode()).isEqualTo(413);
    }
    assertThat(agent.get("/api/sessions").statusCode()).as("server still serves").isEqualTo(200);
  }

  @Test
  void anUnknownRouteIs404Json() throws Exception {
    for (String path : List.of("/api/bash/nope", "/nope", "/api/bash/bash_events/a/b")) {
      HttpResponse<String> response = agent.get(path);
      assertThat(response.statusCode()).as(path).isEqualTo(404);
      assertThat(AgentFixture.json(response)).containsKey("detail");
    }
  }

  @Test
  void aWrongMethodIs405Json() throws Exception {
    HttpResponse<String> get = agent.get("/api/bash/execute_bash_command");
    assertThat(get.statusCode()).isEqualTo(405);
    assertThat(AgentFixture.json(get)).containsKey("detail");
    HttpResponse<String> post = post("/health", "{}");
    assertThat(post.statusCode()).isEqualTo(405);
    assertThat(agent.delete("/api/bash/bash_events/search").statusCode()).isEqualTo(405);
  }

  @Test
  void malformedPercentEncodingIs400() throws Exception {
    String status =
        rawStatusLine(
            "GET /api/bash/bash_events/search?kind__eq=%zz HTTP/1.1\r\nHost: x\r\n"
                + AgentServer.SESSION_KEY_HEADER
                + ": "
                + AgentFixture.KEY
                + "\r\n\r\n");
    assertThat(status).startsWith("HTTP/1.1 400");
  }

  @Test
  void anUnusableEnvironmentNameIsRefusedAndLeavesNoCommandBehind() throws Exception {
    for (Map<String, String> env :
        List.of(Map.of("A=B", "1"), Map.of("A", "nul\u0000byte"), Map.of("", "empty"))) {
      HttpResponse<String> response = post(EXECUTE, BashClient.body("command", "true", "env", env));
      assertThat(response.statusCode()).as(env + " -> " + response.body()).isEqualTo(422);
    }
    assertThat((List<?>) AgentFixture.json(agent.get("/api/bash/commands")).get("items"))
        .as("no command stuck as running")
        .isEmpty();
  }

  @Test
  void aDuplicateSessionKeyHeaderIs400NotFirstOneWins() throws Exception {
    String status =
        rawStatusLine(
            "GET /api/sessions HTTP/1.1\r\nHost: x\r\n"
                + AgentServer.SESSION_KEY_HEADER
                + ": "
                + AgentFixture.KEY
                + "\r\n"
                + AgentServer.SESSION_KEY_HEADER
                + ": wrong\r\n\r\n");
    assertThat(status).startsWith("HTTP/1.1 400");
  }

  @Test
  void aHeadOfAGetRouteAnswersWithoutABody() throws Exception {
    String status = rawStatusLine("HEAD /health HTTP/1.1\r\nHost: x\r\n\r\n");
    assertThat(status).startsWith("HTTP/1.1 200");
  }

  @Test
  void garbageOnTheSocketDoesNotHurtTheServer() throws Exception {
    String status = rawStatusLine("\u0000\u0001GARBAGE / HTTP/9\r\n\r\n");
    assertThat(status).doesNotContain(" 500");
    assertThat(agent.get("/health").statusCode()).isEqualTo(200);
  }

  /** Sends raw bytes and returns the first line of the answer ("" when the server hung up). */
  private String rawStatusLine(String request) throws Exception {
    try (Socket socket = new Socket("127.0.0.1", agent.server().port())) {
      socket.setSoTimeout(5000);
      OutputStream out = socket.getOutputStream();
      out.write(request.getBytes(StandardCharsets.ISO_8859_1));
      out.flush();
      InputStream in = socket.getInputStream();
      StringBuilder line = new StringBuilder();
      int b;
      while ((b = in.read()) >= 0 && b != '\n') {
        line.append((char) b);
      }
      return line.toString().trim();
    } catch (java.net.SocketException e) {
      return "";
    }
  }
}
