package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.ArchiveInfo;
import dev.paddock.api.PageRequest;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxStatus;
import dev.paddock.client.PaddockClient;
import dev.paddock.controlplane.ArchiveSettings;
import dev.paddock.store.WebhookEvent;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * User B, with his API key and his own sandbox's session key, tries every route he can reach
 * against user A's sandbox, conversation and archives; afterwards nothing of A's has changed.
 */
class TenantIsolationTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(60);

  @RegisterExtension
  final ControlPlane plane =
      ControlPlane.archiving(
          new ArchiveSettings(
              true,
              false,
              "tar.gz",
              ArchiveSettings.disabled().timeout(),
              ArchiveSettings.disabled().prefix()));

  @Test
  void nothingAnotherUserDoesChangesASandboxConversationOrArchive() throws Exception {
    PaddockClient admin = PaddockClient.connect(URI.create(plane.url()), ControlPlane.ADMIN_KEY);
    PaddockClient.NewUser alice = admin.createUser("alice", false);
    PaddockClient.NewUser bob = admin.createUser("bob", false);
    PaddockClient asAlice = PaddockClient.connect(URI.create(plane.url()), alice.apiKey());
    PaddockClient asBob = PaddockClient.connect(URI.create(plane.url()), bob.apiKey());

    SandboxInfo archived = asAlice.create(Optional.empty(), true, TIMEOUT);
    asAlice.delete(archived.id());
    SandboxInfo mine = asAlice.create(Optional.empty(), true, TIMEOUT);
    String aliceKey = mine.sessionApiKey().orElseThrow();
    assertThat(post(aliceKey, "/api/v1/webhooks/conversations", "{\"id\":\"conv-a\",\"v\":1}"))
        .isEqualTo(200);
    assertThat(post(aliceKey, "/api/v1/webhooks/events/conv-a", "[{\"kind\":\"A\"}]"))
        .isEqualTo(200);
    Snapshot before = snapshot(asAlice, mine.id(), archived.id());

    String bobKey = asBob.create(Optional.empty(), true, TIMEOUT).sessionApiKey().orElseThrow();
    List<Integer> answers = new ArrayList<>();
    Optional<String> asB = Optional.of(bob.apiKey());
    String id = mine.id();
    answers.add(plane.send("GET", "/api/v1/sandboxes/" + id, asB, null).statusCode());
    answers.add(plane.send("POST", "/api/v1/sandboxes/" + id + "/pause", asB, null).statusCode());
    answers.add(plane.send("POST", "/api/v1/sandboxes/" + id + "/resume", asB, null).statusCode());
    answers.add(plane.send("DELETE", "/api/v1/sandboxes/" + id, asB, null).statusCode());
    answers.add(plane.send("GET", "/api/v1/archives/" + archived.id(), asB, null).statusCode());
    String archive = "/api/v1/archives/" + archived.id() + "/" + before.archives().get(0).name();
    answers.add(plane.send("GET", archive, asB, null).statusCode());
    answers.add(post(bobKey, "/api/v1/webhooks/conversations", "{\"id\":\"conv-a\",\"by\":\"b\"}"));
    answers.add(post(bobKey, "/api/v1/webhooks/events/conv-a", "[{\"injected\":1}]"));
    assertThat(answers).as("every attempt is a 404").containsOnly(404);
    assertThat(plane.send("GET", "/api/v1/sandboxes?id=" + id, asB, null).body())
        .isEqualTo("[null]");
    assertThat(asBob.list(PageRequest.first(100)).items())
        .extracting(SandboxInfo::id)
        .doesNotContain(id, archived.id());

    Snapshot after = snapshot(asAlice, mine.id(), archived.id());
    assertThat(after).isEqualTo(before);
    assertThat(asAlice.agent(mine).exec("true", 10, s -> {}, s -> {}))
        .as("Alice's session key still works at her agent")
        .isZero();
    assertThat(post(aliceKey, "/api/v1/webhooks/events/conv-a", "[{\"kind\":\"B\"}]"))
        .as("and at the control plane")
        .isEqualTo(200);
  }

  /** Everything of Alice's that Bob might change. */
  private record Snapshot(
      SandboxStatus status,
      Optional<String> conversation,
      List<String> events,
      List<ArchiveInfo> archives,
      List<String> archiveContents) {}

  private Snapshot snapshot(PaddockClient owner, String sandboxId, String archivedId)
      throws Exception {
    List<ArchiveInfo> archives = owner.archives(archivedId);
    List<String> contents = new ArrayList<>();
    Path dir = Files.createTempDirectory("paddock-tenancy-");
    try {
      for (ArchiveInfo info : archives) {
        Path file = dir.resolve("archive");
        owner.downloadArchive(archivedId, info.name(), file);
        contents.add(Integer.toHexString(java.util.Arrays.hashCode(Files.readAllBytes(file))));
        Files.delete(file);
      }
    } finally {
      Files.delete(dir);
    }
    return new Snapshot(
        owner.get(sandboxId).orElseThrow().status(),
        plane.store().conversation("conv-a"),
        plane.store().events("conv-a", 0, 100).stream().map(WebhookEvent::json).toList(),
        archives,
        contents);
  }

  private int post(String sessionKey, String path, String body) throws Exception {
    HttpResponse<String> response = plane.asSandbox("POST", path, sessionKey, body);
    return response.statusCode();
  }
}
