package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxStatus;
import dev.paddock.client.AgentClient;
import dev.paddock.client.PaddockClient;
import dev.paddock.client.PaddockClientException;
import dev.paddock.http.Json;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.assertj.core.api.Assertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The REST API and the Java client end to end, over a real socket, with real sandboxes. */
class ControlPlaneApiTest {
  @RegisterExtension final ControlPlane plane = new ControlPlane();

  private PaddockClient admin() {
    return PaddockClient.connect(URI.create(plane.url()), ControlPlane.ADMIN_KEY);
  }

  private static Object json(HttpResponse<String> response) {
    return Json.parseAny(response.body().getBytes(StandardCharsets.UTF_8));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> object(HttpResponse<String> response) {
    return (Map<String, Object>) json(response);
  }

  @Test
  void everyApiRouteNeedsAValidBearerKey() throws Exception {
    for (String path :
        List.of("/api/v1/sandboxes/search", "/api/v1/sandboxes?id=x", "/api/v1/users/me")) {
      HttpResponse<String> none = plane.send("GET", path, Optional.empty(), null);
      HttpResponse<String> wrong = plane.send("GET", path, Optional.of("pdk_wrong"), null);
      assertThat(none.statusCode()).as(path).isEqualTo(401);
      assertThat(wrong.statusCode()).as(path).isEqualTo(401);
      assertThat(object(wrong)).containsKey("detail");
    }
    assertThat(plane.send("GET", "/alive", Optional.empty(), null).statusCode()).isEqualTo(200);
  }

  @Test
  void createWaitExecPauseResumeDeleteThroughTheClient() throws Exception {
    PaddockClient client = admin();
    SandboxInfo running = client.create(Optional.empty(), true, Duration.ofSeconds(60));
    assertThat(running.status()).isEqualTo(SandboxStatus.RUNNING);
    assertThat(running.sessionApiKey()).isPresent();
    assertThat(running.agentServerUrl()).isPresent();

    // OpenHands clients poll GET ?id= and take the key from there while RUNNING.
    SandboxInfo polled = client.get(running.id()).orElseThrow();
    assertThat(polled.sessionApiKey()).isEqualTo(running.sessionApiKey());
    StringBuilder out = new StringBuilder();
    int exit = client.agent(polled).exec("echo hi; exit 4", 30, out::append, err -> {});
    assertThat(exit).isEqualTo(4);
    assertThat(out).hasToString("hi\n");

    AgentClient oldAgent = client.agent(polled);
    client.pause(running.id());
    SandboxInfo paused = client.get(running.id()).orElseThrow();
    assertThat(paused.status()).isEqualTo(SandboxStatus.PAUSED);
    assertThat(paused.sessionApiKey()).isEmpty();

    SandboxInfo resumed = client.resume(running.id());
    assertThat(resumed.sessionApiKey()).isPresent().isNotEqualTo(running.sessionApiKey());
    Assertions.assertThatThrownBy(() -> oldAgent.exec("true", 5, s -> {}, s -> {}))
        .isInstanceOf(PaddockClientException.class)
        .satisfies(e -> assertThat(((PaddockClientException) e).status()).isEqualTo(401));
    assertThat(client.agent(resumed).exec("true", 5, s -> {}, s -> {})).isZero();

    client.delete(running.id());
    assertThat(client.get(running.id())).isEmpty();
  }

  @Test
  void sandboxesAreInvisibleToOtherUsersAndVisibleToAdmins() throws Exception {
    PaddockClient.NewUser alice = admin().createUser("alice", false);
    PaddockClient.NewUser bob = admin().createUser("bob", false);
    PaddockClient asAlice = PaddockClient.connect(URI.create(plane.url()), alice.apiKey());
    PaddockClient asBob = PaddockClient.connect(URI.create(plane.url()), bob.apiKey());
    SandboxInfo mine = asAlice.create(Optional.empty(), true, Duration.ofSeconds(60));

    assertThat(asBob.get(mine.id())).isEmpty();
    assertThat(asBob.list(dev.paddock.api.PageRequest.first(100)).items()).isEmpty();
    HttpResponse<String> bobPause =
        plane.send(
            "POST", "/api/v1/sandboxes/" + mine.id() + "/pause", Optional.of(bob.apiKey()), null);
    assertThat(bobPause.statusCode()).isEqualTo(404);
    HttpResponse<String> bobDelete =
        plane.send("DELETE", "/api/v1/sandboxes/" + mine.id(), Optional.of(bob.apiKey()), null);
    assertThat(bobDelete.statusCode()).isEqualTo(404);
    assertThat(admin().get(mine.id())).isPresent();
    assertThat(asAlice.get(mine.id()).orElseThrow().createdByUserId()).contains(alice.user().id());
  }

  @Test
  void revokedApiKeysStopWorkingAtOnce() throws Exception {
    PaddockClient.NewUser carol = admin().createUser("carol", false);
    Optional<String> key = Optional.of(carol.apiKey());
    assertThat(plane.send("GET", "/api/v1/users/me", key, null).statusCode()).isEqualTo(200);

    assertThat(admin().revokeUser(carol.user().id())).isEqualTo(1);

    assertThat(plane.send("GET", "/api/v1/users/me", key, null).statusCode()).isEqualTo(401);
    HttpResponse<String> asUser =
        plane.send(
            "GET", "/api/v1/users", Optional.of(admin().createUser("dave", false).apiKey()), null);
    assertThat(asUser.statusCode()).as("user listing is for admins").isEqualTo(403);
    assertThat(plane.admin("POST", "/api/v1/users", "{\"name\":\"carol\"}").statusCode())
        .isEqualTo(409);
    assertThat(plane.admin("POST", "/api/v1/users", "{\"name\":\"bad name!\"}").statusCode())
        .isEqualTo(422);
    assertThat(plane.admin("POST", "/api/v1/users", "{\"nam\":\"x\"}").statusCode()).isEqualTo(422);
  }

  @Test
  void deleteAcceptsOpenHandsQueryParameterAndRejectsAMismatch() throws Exception {
    SandboxInfo running = admin().create(Optional.empty(), true, Duration.ofSeconds(60));
    String id = running.id();
    assertThat(
            plane
                .admin("DELETE", "/api/v1/sandboxes/" + id + "?sandbox_id=other", null)
                .statusCode())
        .isEqualTo(400);
    HttpResponse<String> deleted =
        plane.admin("DELETE", "/api/v1/sandboxes/" + id + "?sandbox_id=" + id, null);
    assertThat(deleted.statusCode()).isEqualTo(200);
    assertThat(object(deleted)).containsEntry("success", true);
    assertThat(plane.admin("DELETE", "/api/v1/sandboxes/" + id, null).statusCode()).isEqualTo(404);
  }

  @Test
  void repeatedQueryParametersAndAuthHeadersAre400NotFirstOneWins() throws Exception {
    String id = admin().create(Optional.empty(), true, Duration.ofSeconds(60)).id();
    HttpResponse<String> twice =
        plane.admin(
            "DELETE", "/api/v1/sandboxes/" + id + "?sandbox_id=" + id + "&sandbox_id=other", null);
    assertThat(twice.statusCode()).isEqualTo(400);
    assertThat(object(twice).get("detail").toString()).contains("sandbox_id");
    var twoKeys =
        java.net.http.HttpRequest.newBuilder(URI.create(plane.url() + "/api/v1/users/me"))
            .header("Authorization", "Bearer " + ControlPlane.ADMIN_KEY)
            .header("Authorization", "Bearer pdk_someone_else")
            .build();
    HttpResponse<String> refused = plane.http.send(twoKeys, HttpResponse.BodyHandlers.ofString());
    assertThat(refused.statusCode()).isEqualTo(400);
    assertThat(object(refused).get("detail").toString()).contains("Authorization");
    assertThat(plane.admin("DELETE", "/api/v1/sandboxes/" + id, null).statusCode())
        .as("the refused DELETE deleted nothing")
        .isEqualTo(200);
  }

  @Test
  void webhooksAreStoredOnlyWithARunningSandboxesKey() throws Exception {
    SandboxInfo running = admin().create(Optional.empty(), true, Duration.ofSeconds(60));
    String key = running.sessionApiKey().orElseThrow();
    var events =
        java.net.http.HttpRequest.newBuilder(
                URI.create(plane.url() + "/api/v1/webhooks/events/conv-1"))
            .header("X-Session-API-Key", key)
            .POST(
                java.net.http.HttpRequest.BodyPublishers.ofString(
                    "[{\"kind\":\"A\"},{\"kind\":\"B\"}]"))
            .build();
    HttpResponse<String> stored = plane.http.send(events, HttpResponse.BodyHandlers.ofString());
    assertThat(stored.statusCode()).as(stored.body()).isEqualTo(200);
    assertThat(object(stored)).containsEntry("stored", 2);

    var notArray =
        java.net.http.HttpRequest.newBuilder(
                URI.create(plane.url() + "/api/v1/webhooks/events/conv-1"))
            .header("X-Session-API-Key", key)
            .POST(java.net.http.HttpRequest.BodyPublishers.ofString("{\"kind\":\"A\"}"))
            .build();
    assertThat(plane.http.send(notArray, HttpResponse.BodyHandlers.ofString()).statusCode())
        .isEqualTo(422);
    var validate =
        java.net.http.HttpRequest.newBuilder(URI.create(plane.url() + "/api/v1/session/validate"))
            .header("X-Session-API-Key", key)
            .build();
    assertThat(plane.http.send(validate, HttpResponse.BodyHandlers.ofString()).statusCode())
        .isEqualTo(200);

    admin().pause(running.id());
    assertThat(plane.http.send(validate, HttpResponse.BodyHandlers.ofString()).statusCode())
        .as("a paused sandbox's key is revoked")
        .isEqualTo(401);
    assertThat(plane.http.send(events, HttpResponse.BodyHandlers.ofString()).statusCode())
        .isEqualTo(401);
  }

  @Test
  void badInputIsA4xxThatSaysWhatWasWrong() throws Exception {
    assertThat(plane.admin("GET", "/api/v1/sandboxes/search?limit=1000", null).statusCode())
        .isEqualTo(422);
    assertThat(plane.admin("GET", "/api/v1/sandboxes/search?limt=10", null).statusCode())
        .isEqualTo(422);
    assertThat(plane.admin("POST", "/api/v1/sandboxes?sandbox_spec_id=nope", null).statusCode())
        .isEqualTo(400);
    assertThat(plane.admin("POST", "/api/v1/sandboxes?sandbox_id=NOT%20VALID", null).statusCode())
        .isEqualTo(400);
    assertThat(plane.admin("GET", "/api/v1/sandboxes/search?page_id=garbage", null).statusCode())
        .isEqualTo(400);
    assertThat(plane.admin("POST", "/api/v1/users", "{not json").statusCode()).isEqualTo(400);
    assertThat(plane.admin("GET", "/api/v1/nothing-here", null).statusCode()).isEqualTo(404);
    assertThat(plane.admin("POST", "/api/v1/sandboxes/none/pause", null).statusCode())
        .isEqualTo(404);
  }

  @Test
  void specsMetricsAndOpenApiAreServed() throws Exception {
    Map<String, Object> specs = object(plane.admin("GET", "/api/v1/sandbox-specs/search", null));
    assertThat((List<?>) specs.get("items")).hasSize(1);
    assertThat(((Map<?, ?>) ((List<?>) specs.get("items")).get(0)).get("agent_server"))
        .as("the process backend injects its own agent")
        .isEqualTo("paddock");
    List<?> batch =
        (List<?>)
            json(plane.admin("GET", "/api/v1/sandbox-specs?id=process-default&id=nope", null));
    assertThat(batch).hasSize(2);
    assertThat(batch.get(1)).isNull();

    admin().create(Optional.empty(), true, Duration.ofSeconds(60));
    String metrics = plane.send("GET", "/metrics", Optional.empty(), null).body();
    assertThat(metrics)
        .contains("paddock_sandboxes{status=\"RUNNING\"} 1")
        .contains(
            "paddock_http_requests_total{method=\"POST\",route=\"/api/v1/sandboxes\",code=\"200\"} 1");
    Map<String, Object> openApi =
        object(plane.send("GET", "/openapi.json", Optional.empty(), null));
    assertThat(openApi).containsEntry("openapi", "3.0.3");
    assertThat(((Map<?, ?>) openApi.get("paths")).containsKey("/api/v1/sandboxes/search")).isTrue();
    Map<?, ?> schemas = (Map<?, ?>) ((Map<?, ?>) openApi.get("components")).get("schemas");
    Map<?, ?> spec = (Map<?, ?>) ((Map<?, ?>) schemas.get("SandboxSpec")).get("properties");
    assertThat(spec.containsKey("agent_server")).isTrue();
  }

  @Test
  void theCliCreatesExecutesWithTheCommandsExitCodeAndDeletes() throws Exception {
    String[] conn = {"--url", plane.url(), "--api-key", ControlPlane.ADMIN_KEY};
    assertThat(Main.run(concat(new String[] {"sandbox", "create"}, conn))).isZero();
    SandboxInfo sandbox = admin().list(dev.paddock.api.PageRequest.first(10)).items().get(0);
    assertThat(
            Main.run(
                concat(new String[] {"exec", sandbox.id()}, conn, new String[] {"--", "exit 9"})))
        .isEqualTo(9);
    assertThat(Main.run(concat(new String[] {"sandbox", "delete", sandbox.id()}, conn))).isZero();
    assertThat(Main.run(concat(new String[] {"sandbox", "get", sandbox.id()}, conn))).isEqualTo(1);
  }

  private static String[] concat(String[]... parts) {
    return java.util.Arrays.stream(parts).flatMap(java.util.Arrays::stream).toArray(String[]::new);
  }
}
