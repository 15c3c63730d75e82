package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.Resources;
import dev.paddock.api.SandboxFilter;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.StartRequest;
import dev.paddock.client.PaddockClient;
import dev.paddock.controlplane.SandboxLimits;
import dev.paddock.http.Json;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Create with a body, find by labels, relabel, keepalive, and session keys for owners only, over
 * the REST API with real sandboxes (issue 9).
 */
class SandboxSettingsApiTest {
  @RegisterExtension
  final ControlPlane plane =
      new ControlPlane(
          b ->
              b.limits(
                  SandboxLimits.fromSettings(
                      Map.of(
                          "PADDOCK_MAX_MEMORY", "2g",
                          "PADDOCK_MAX_CPUS", "2",
                          "PADDOCK_MAX_TIMEOUT", "1h",
                          "PADDOCK_DEFAULT_TIMEOUT", "10m"))));

  private PaddockClient admin() {
    return PaddockClient.connect(URI.create(plane.url()), ControlPlane.ADMIN_KEY);
  }

  private static Map<String, Object> object(HttpResponse<String> response) {
    @SuppressWarnings("unchecked")
    Map<String, Object> m =
        (Map<String, Object>) Json.parseAny(response.body().getBytes(StandardCharsets.UTF_8));
    return m;
  }

  private HttpResponse<String> create(String body) throws Exception {
    return plane.admin("POST", "/api/v1/sandboxes", body);
  }

  @Test
  void createWithABodyShowsEverySettingAndTheSandboxSeesItsEnv() throws Exception {
    HttpResponse<String> created =
        plane.admin(
            "POST",
            "/api/v1/sandboxes?wait=true&timeout=60",
            """
            {"env": {"GREETING": "hello"}, "labels": {"team": "ml"},
             "resources": {"memory": "512m", "cpus": 1, "pids": 256},
             "timeout": 600, "idle_timeout": 120, "on_timeout": "pause", "on_idle": "delete"}
            """);

    assertThat(created.statusCode()).as(created.body()).isEqualTo(200);
    Map<String, Object> shown = object(created);
    assertThat(shown.get("labels")).isEqualTo(Map.of("team", "ml"));
    assertThat(shown.get("resources"))
        .isEqualTo(Map.of("memory", 536870912, "cpus", 1.0, "pids", 256));
    assertThat(shown.get("idle_timeout")).isEqualTo(120);
    assertThat(shown.get("on_timeout")).isEqualTo("pause");
    assertThat(shown.get("on_idle")).isEqualTo("delete");
    Instant createdAt = Instant.parse((String) shown.get("created_at"));
    assertThat(Instant.parse((String) shown.get("timeout_at")))
        .isEqualTo(createdAt.plusSeconds(600));
    assertThat(shown).containsKeys("last_activity_at", "resources_unenforced", "image");

    SandboxInfo info = admin().get((String) shown.get("id")).orElseThrow();
    StringBuilder out = new StringBuilder();
    admin().agent(info).exec("echo $GREETING", 30, out::append, err -> {});
    assertThat(out).hasToString("hello\n");
    // working_dir is where commands really run, not the spec's relative ".".
    StringBuilder pwd = new StringBuilder();
    admin().agent(info).exec("pwd -P", 30, pwd::append, err -> {});
    assertThat(shown.get("working_dir")).isEqualTo(pwd.toString().strip());
    assertThat(info.settings().workingDir()).hasValue(pwd.toString().strip());
    assertThat(info.settings().resources().memoryBytes()).hasValue(512L << 20);
  }

  @Test
  void badBodiesAreRefusedSayingWhatWasWrong() throws Exception {
    assertStatus(create("{not json"), 400, "malformed JSON");
    assertStatus(create("{\"imgae\": \"x\"}"), 422, "imgae");
    assertStatus(create("{\"timeout\": \"soon\"}"), 422, "timeout");
    assertStatus(create("{\"resources\": {\"memory\": true}}"), 422, "resources.memory");
    assertStatus(create("{\"resources\": {\"gpus\": 1}}"), 422, "resources.gpus");
    assertStatus(create("{\"labels\": {\"team\": 3}}"), 422, "labels.team");
    assertStatus(create("{\"on_idle\": \"explode\"}"), 422, "on_idle");
    assertStatus(create("{\"sandbox_spec_id\": \"nope\"}"), 400, "allowed");
    assertStatus(create("{\"image\": \"evil/miner\"}"), 400, "not allowed");
    assertStatus(create("{\"resources\": {\"memory\": \"8g\"}}"), 422, "PADDOCK_MAX_MEMORY");
    assertStatus(create("{\"timeout\": 7200}"), 422, "PADDOCK_MAX_TIMEOUT");
    assertStatus(create("{\"env\": {\"SESSION_API_KEY\": \"x\"}}"), 422, "reserved");
    assertStatus(create("{\"env\": {\"A-B\": \"x\"}}"), 422, "A-B");
    assertStatus(create("{\"labels\": {\"-bad\": \"x\"}}"), 422, "-bad");
    assertStatus(
        plane.admin("POST", "/api/v1/sandboxes?sandbox_id=abc", "{\"sandbox_id\": \"xyz\"}"),
        400,
        "disagree");
    assertThat(admin().list(dev.paddock.api.PageRequest.first(10)).items())
        .as("nothing was created by a refused request")
        .isEmpty();
  }

  @Test
  void searchByLabelStatusAndSpecThenRelabel() throws Exception {
    PaddockClient client = admin();
    SandboxInfo ml =
        client.create(
            StartRequest.builder().labels(Map.of("team", "ml", "tier", "gpu")).build(),
            true,
            Duration.ofSeconds(60));
    SandboxInfo web =
        client.create(
            StartRequest.builder().labels(Map.of("team", "web")).build(),
            true,
            Duration.ofSeconds(60));
    client.pause(web.id());

    HttpResponse<String> byLabels =
        plane.admin("GET", "/api/v1/sandboxes/search?label=team%3Dml&label=tier%3Dgpu", null);
    assertThat(ids(byLabels)).containsExactly(ml.id());
    assertThat(ids(plane.admin("GET", "/api/v1/sandboxes/search?status=PAUSED", null)))
        .containsExactly(web.id());
    assertThat(ids(plane.admin("GET", "/api/v1/sandboxes/search?sandbox_spec_id=nope", null)))
        .isEmpty();
    assertStatus(plane.admin("GET", "/api/v1/sandboxes/search?label=team", null), 400, "key=value");
    assertStatus(plane.admin("GET", "/api/v1/sandboxes/search?status=ASLEEP", null), 400, "ASLEEP");

    SandboxInfo relabelled = client.setLabels(web.id(), Map.of("team", "ml"));
    assertThat(relabelled.settings().labels()).containsExactly(Map.entry("team", "ml"));
    assertThat(
            client
                .list(
                    new SandboxFilter(Set.of(), Map.of("team", "ml"), Optional.empty()),
                    dev.paddock.api.PageRequest.first(10))
                .items())
        .extracting(SandboxInfo::id)
        .containsExactlyInAnyOrder(ml.id(), web.id());
    assertStatus(
        plane.admin("PATCH", "/api/v1/sandboxes/" + web.id(), "{\"labels\": [\"x\"]}"),
        422,
        "labels");
    assertStatus(plane.admin("PATCH", "/api/v1/sandboxes/nope", "{\"labels\": {}}"), 404, "nope");
  }

  @Test
  void keepaliveMovesTheDeadlineWithinTheMaximum() throws Exception {
    SandboxInfo sandbox = admin().create(StartRequest.defaults(), false, Duration.ZERO);
    Instant defaultEnd = sandbox.timeoutAt().orElseThrow();
    assertThat(defaultEnd).isEqualTo(sandbox.createdAt().plus(Duration.ofMinutes(10)));

    SandboxInfo kept = admin().keepAlive(sandbox.id(), Duration.ofMinutes(50));

    assertThat(kept.timeoutAt().orElseThrow()).isAfter(defaultEnd.plus(Duration.ofMinutes(30)));
    assertStatus(
        plane.admin(
            "POST", "/api/v1/sandboxes/" + sandbox.id() + "/keepalive", "{\"timeout\": 99999}"),
        422,
        "PADDOCK_MAX_TIMEOUT");
    HttpResponse<String> renewed =
        plane.admin("POST", "/api/v1/sandboxes/" + sandbox.id() + "/keepalive", null);
    assertThat(renewed.statusCode()).as(renewed.body()).isEqualTo(200);
    assertStatus(plane.admin("POST", "/api/v1/sandboxes/nope/keepalive", null), 404, "nope");
  }

  @Test
  void keysGoToTheOwnerOnlyAndANonOwnersDeleteTouchesNothing() throws Exception {
    PaddockClient.NewUser alice = admin().createUser("alice", false);
    PaddockClient.NewUser bob = admin().createUser("bob", false);
    PaddockClient asAlice = PaddockClient.connect(URI.create(plane.url()), alice.apiKey());
    SandboxInfo sandbox = asAlice.create(StartRequest.defaults(), true, Duration.ofSeconds(60));
    String key = sandbox.sessionApiKey().orElseThrow();

    assertThat(asAlice.get(sandbox.id()).orElseThrow().sessionApiKey()).contains(key);
    Map<String, Object> adminView =
        object(plane.admin("GET", "/api/v1/sandboxes/" + sandbox.id(), null));
    assertThat(adminView.get("session_api_key")).as("an admin never gets a user's key").isNull();
    assertThat(admin().get(sandbox.id()).orElseThrow().sessionApiKey()).isEmpty();
    assertThat(plane.admin("GET", "/api/v1/sandboxes/search", null).body()).doesNotContain(key);

    HttpResponse<String> bobsDelete =
        plane.send("DELETE", "/api/v1/sandboxes/" + sandbox.id(), Optional.of(bob.apiKey()), null);
    assertThat(bobsDelete.statusCode()).isEqualTo(404);
    SandboxInfo after = asAlice.get(sandbox.id()).orElseThrow();
    assertThat(after.status()).isEqualTo(SandboxStatus.RUNNING);
    assertThat(after.sessionApiKey()).contains(key);
    assertThat(asAlice.agent(after).exec("true", 10, s -> {}, s -> {})).isZero();
  }

  @Test
  void theClientSendsResourcesAndParsesThemBack() {
    SandboxInfo sandbox =
        admin()
            .create(
                StartRequest.builder()
                    .resources(
                        new Resources(
                            OptionalDouble.of(1.5),
                            OptionalLong.of(1L << 30),
                            OptionalInt.of(300),
                            OptionalLong.empty()))
                    .labels(Map.of("k", "v"))
                    .build(),
                false,
                Duration.ZERO);

    SandboxInfo read = admin().get(sandbox.id()).orElseThrow();
    assertThat(read.settings().resources()).isEqualTo(sandbox.settings().resources());
    assertThat(read.settings().resources().cpus()).hasValue(1.5);
    assertThat(read.settings().labels()).containsExactly(Map.entry("k", "v"));
  }

  private static List<Object> ids(HttpResponse<String> response) {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    return ((List<?>) object(response).get("items"))
        .stream().map(i -> ((Map<?, ?>) i).get("id")).map(Object.class::cast).toList();
  }

  private static void assertStatus(HttpResponse<String> response, int status, String detail) {
    assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
    assertThat((String) object(response).get("detail")).contains(detail);
  }
}
