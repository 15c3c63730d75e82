package dev.paddock.agent.pty;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.agent.AgentFixture;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.awaitility.Awaitility;

/** The terminal REST routes of an {@link AgentFixture}'s agent, as a test sees them. */
final class TerminalClient {
  private final AgentFixture agent;

  TerminalClient(AgentFixture agent) {
    this.agent = agent;
  }

  /**
   * Creates a terminal from a JSON request body; returns its id. An empty body gets {@code HOME}
   * set to the workspace, so the login shell does not run the host user's profile (root's here runs
   * {@code pyenv rehash}, which waits up to a minute on a lock file that a shell killed by an
   * earlier test can leave behind).
   */
  String create(String json) throws Exception {
    String body = json.equals("{}") ? "{\"env\": {\"HOME\": \"" + agent.workspace() + "\"}}" : json;
    HttpResponse<String> created = agent.postJson("/api/terminals", body);
    assertThat(created.statusCode()).as(created.body()).isEqualTo(201);
    return (String) AgentFixture.json(created).get("id");
  }

  Map<String, Object> info(String id) throws Exception {
    HttpResponse<String> info = agent.get("/api/terminals/" + id);
    assertThat(info.statusCode()).as(info.body()).isEqualTo(200);
    return AgentFixture.json(info);
  }

  void type(String id, String text) throws Exception {
    HttpResponse<String> typed =
        agent.send(
            agent
                .request("/api/terminals/" + id + "/input")
                .POST(HttpRequest.BodyPublishers.ofString(text))
                .build());
    assertThat(typed.statusCode()).as(typed.body()).isEqualTo(200);
  }

  /** The whole scrollback, decoded as UTF-8. */
  String output(String id) throws Exception {
    return agent.get("/api/terminals/" + id + "/output").body();
  }

  /** Waits until the scrollback contains {@code text}; returns the scrollback. */
  String awaitOutput(String id, String text) {
    return Awaitility.await("terminal output containing " + text)
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(20))
        .until(() -> output(id), out -> out.contains(text));
  }

  /** Waits until the terminal has exited; returns its final state. */
  Map<String, Object> awaitExit(String id) {
    return Awaitility.await("terminal " + id + " exited")
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(20))
        .until(() -> info(id), info -> info.get("status").equals("exited"));
  }

  static String utf8(byte[] bytes) {
    return new String(bytes, StandardCharsets.UTF_8);
  }
}
