package dev.paddock.agent;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.agent.core.KeyRing;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Servers started without session keys: open when no key at all, closed with an admin key. */
class KeylessAgentTest {
  private static final String NEW_KEY = "rotated-session-key-42";

  @RegisterExtension
  final AgentFixture open =
      new AgentFixture(
          b -> b.sessionKeys(KeyRing.ofKeys(List.of())).adminKeys(KeyRing.ofKeys(List.of())));

  @RegisterExtension
  final AgentFixture adminOnly = new AgentFixture(b -> b.sessionKeys(KeyRing.ofKeys(List.of())));

  private static HttpResponse<String> sessions(AgentFixture agent, String key) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(agent.uri("/api/sessions")).GET();
    if (key != null) {
      request.header(AgentServer.SESSION_KEY_HEADER, key);
    }
    return agent.send(request.build());
  }

  private static HttpResponse<String> rotate(AgentFixture agent, String adminKey) throws Exception {
    return agent.send(
        HttpRequest.newBuilder(agent.uri("/admin/session-keys"))
            .header(AgentServer.ADMIN_KEY_HEADER, adminKey)
            .PUT(HttpRequest.BodyPublishers.ofString(HealthAndAuthTest.digests(NEW_KEY)))
            .build());
  }

  @Test
  void withNoKeysAtAllTheApiIsOpen() throws Exception {
    assertThat(sessions(open, null).statusCode()).isEqualTo(200);
  }

  @Test
  void withNoAdminKeyRotationIsDisabled() throws Exception {
    assertThat(rotate(open, "anything").statusCode()).isEqualTo(404);
  }

  @Test
  void withOnlyAnAdminKeyTheApiIsClosedUntilKeysAreRotatedIn() throws Exception {
    assertThat(sessions(adminOnly, null).statusCode()).isEqualTo(401);
    assertThat(sessions(adminOnly, "").statusCode()).isEqualTo(401);

    assertThat(rotate(adminOnly, AgentFixture.ADMIN_KEY).statusCode()).isEqualTo(200);
    assertThat(sessions(adminOnly, NEW_KEY).statusCode()).isEqualTo(200);
    assertThat(sessions(adminOnly, null).statusCode()).isEqualTo(401);
  }
}
