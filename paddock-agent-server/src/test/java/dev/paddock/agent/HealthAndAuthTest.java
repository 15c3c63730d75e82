package dev.paddock.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.agent.core.KeyRing;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class HealthAndAuthTest {
  private static final String NEW_KEY = "rotated-session-key-42";

  @RegisterExtension final AgentFixture agent = new AgentFixture();

  private HttpResponse<String> anonymous(String path) throws Exception {
    return agent.send(HttpRequest.newBuilder(agent.uri(path)).GET().build());
  }

  private HttpResponse<String> withKey(String header, String key) throws Exception {
    return agent.send(
        HttpRequest.newBuilder(agent.uri("/api/sessions")).header(header, key).GET().build());
  }

  private HttpResponse<String> rotate(String adminKey, String body) throws Exception {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(agent.uri("/admin/session-keys"))
            .header("Content-Type", "application/json")
            .PUT(HttpRequest.BodyPublishers.ofString(body));
    if (adminKey != null) {
      request.header(AgentServer.ADMIN_KEY_HEADER, adminKey);
    }
    return agent.send(request.build());
  }

  static String digests(String... keys) {
    return BashClient.body(
        "session_api_key_sha256", List.of(keys).stream().map(KeyRing::sha256Hex).toList());
  }

  @Test
  void aliveAndHealthSayOkWithoutAKey() throws Exception {
    for (String path : List.of("/alive", "/health")) {
      HttpResponse<String> response = anonymous(path);
      assertThat(response.statusCode()).as(path).isEqualTo(200);
      assertThat(AgentFixture.json(response)).isEqualTo(Map.of("status", "ok"));
    }
  }

  @Test
  void readyAnswers200WithoutAKey() throws Exception {
    HttpResponse<String> response = anonymous("/ready");
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(AgentFixture.json(response)).containsEntry("status", "ready");
  }

  @Test
  @SuppressWarnings("unchecked")
  void serverInfoDescribesTheServerWithoutAKey() throws Exception {
    HttpResponse<String> response = anonymous("/server_info");
    assertThat(response.statusCode()).isEqualTo(200);
    Map<String, Object> info = AgentFixture.json(response);
    assertThat(info)
        .containsKeys("title", "version", "uptime", "idle_time", "java_version")
        .containsEntry("usable_tools", List.of("bash", "file", "git"));
    assertThat((List<Object>) info.get("capabilities"))
        .contains("bash_v1", "streaming_exec_v1", "stdin_v1", "signals_v1", "sessions_v1");
    assertThat(((Number) info.get("uptime")).doubleValue()).isNotNegative();
    assertThat(((Number) info.get("idle_time")).doubleValue()).isNotNegative();
  }

  @Test
  void apiWithoutAKeyIs401WithJsonDetail() throws Exception {
    HttpResponse<String> response = anonymous("/api/sessions");
    assertThat(response.statusCode()).isEqualTo(401);
    assertThat(response.headers().firstValue("Content-Type")).hasValue("application/json");
    assertThat(AgentFixture.json(response)).containsKey("detail");
  }

  @Test
  void apiWithAWrongKeyIs401() throws Exception {
    assertThat(withKey(AgentServer.SESSION_KEY_HEADER, "not-the-key").statusCode()).isEqualTo(401);
    assertThat(withKey(AgentServer.SESSION_KEY_HEADER, AgentFixture.KEY.toUpperCase()).statusCode())
        .as("keys are case-sensitive")
        .isEqualTo(401);
  }

  @Test
  void apiWithTheRightKeyIs200() throws Exception {
    assertThat(withKey(AgentServer.SESSION_KEY_HEADER, AgentFixture.KEY).statusCode())
        .isEqualTo(200);
  }

  @Test
  void keyHeaderNameIsCaseInsensitive() throws Exception {
    assertThat(withKey("x-session-api-key", AgentFixture.KEY).statusCode()).isEqualTo(200);
    assertThat(withKey("X-SESSION-API-KEY", AgentFixture.KEY).statusCode()).isEqualTo(200);
  }

  @Test
  void unknownApiRoutesNeedAKeyBeforeTheyAre404() throws Exception {
    assertThat(anonymous("/api/no/such/route").statusCode()).isEqualTo(401);
  }

  @Test
  void oddlySpelledPathsDoNotBypassTheKeyCheck() throws Exception {
    for (String path :
        List.of(
            "/%61pi/sessions",
            "//api/sessions", "/./api/sessions", "/api/../api/sessions", "/api/sessions/")) {
      assertThat(anonymous(path).statusCode()).as(path).isIn(401, 404);
    }
  }

  @Test
  void rotationRefusesTheOldKeyAtOnceAndAcceptsTheNewOne() throws Exception {
    HttpResponse<String> rotated = rotate(AgentFixture.ADMIN_KEY, digests(NEW_KEY));
    assertThat(rotated.statusCode()).as(rotated.body()).isEqualTo(200);
    assertThat(AgentFixture.json(rotated)).containsEntry("key_count", 1);

    assertThat(withKey(AgentServer.SESSION_KEY_HEADER, AgentFixture.KEY).statusCode())
        .isEqualTo(401);
    assertThat(withKey(AgentServer.SESSION_KEY_HEADER, NEW_KEY).statusCode()).isEqualTo(200);
  }

  @Test
  void rotationCanKeepSeveralKeys() throws Exception {
    assertThat(rotate(AgentFixture.ADMIN_KEY, digests(AgentFixture.KEY, NEW_KEY)).statusCode())
        .isEqualTo(200);
    assertThat(withKey(AgentServer.SESSION_KEY_HEADER, AgentFixture.KEY).statusCode())
        .isEqualTo(200);
    assertThat(withKey(AgentServer.SESSION_KEY_HEADER, NEW_KEY).statusCode()).isEqualTo(200);
  }

  @Test
  void rotationWithAWrongOrMissingAdminKeyIs401AndChangesNothing() throws Exception {
    assertThat(rotate("wrong-admin-key", digests(NEW_KEY)).statusCode()).isEqualTo(401);
    assertThat(rotate(null, digests(NEW_KEY)).statusCode()).isEqualTo(401);
    assertThat(rotate(AgentFixture.KEY, digests(NEW_KEY)).statusCode())
        .as("a session key is not an admin key")
        .isEqualTo(401);
    assertThat(withKey(AgentServer.SESSION_KEY_HEADER, AgentFixture.KEY).statusCode())
        .isEqualTo(200);
    assertThat(withKey(AgentServer.SESSION_KEY_HEADER, NEW_KEY).statusCode()).isEqualTo(401);
  }

  @Test
  void rotatingToNoKeysRefusesEveryoneRatherThanOpeningTheApi() throws Exception {
    assertThat(rotate(AgentFixture.ADMIN_KEY, digests()).statusCode()).isEqualTo(200);
    assertThat(withKey(AgentServer.SESSION_KEY_HEADER, AgentFixture.KEY).statusCode())
        .isEqualTo(401);
    assertThat(anonymous("/api/sessions").statusCode()).isEqualTo(401);
    assertThat(withKey(AgentServer.SESSION_KEY_HEADER, "").statusCode()).isEqualTo(401);
  }

  @Test
  void malformedDigestsAre422AndChangeNothing() throws Exception {
    for (String body :
        List.of(
            BashClient.body("session_api_key_sha256", List.of("abc")),
            BashClient.body("session_api_key_sha256", List.of("z".repeat(64))),
            BashClient.body("session_api_key_sha256", "not-a-list"),
            BashClient.body("session_api_key_sha256", List.of(1, 2)),
            BashClient.body("session_api_key", List.of(NEW_KEY)),
            "{}")) {
      HttpResponse<String> response = rotate(AgentFixture.ADMIN_KEY, body);
      assertThat(response.statusCode()).as(body + " -> " + response.body()).isEqualTo(422);
    }
    assertThat(withKey(AgentServer.SESSION_KEY_HEADER, AgentFixture.KEY).statusCode())
        .isEqualTo(200);
  }

  @Test
  void rotationIsNotAnApiRouteSoASessionKeyDoesNotReachIt() throws Exception {
    HttpResponse<String> response =
        agent.send(
            agent
                .request("/admin/session-keys")
                .PUT(HttpRequest.BodyPublishers.ofString(digests(NEW_KEY)))
                .build());
    assertThat(response.statusCode()).isEqualTo(401);
  }
}
