package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxStatus;
import dev.paddock.client.PaddockClient;
import dev.paddock.controlplane.ArchiveSettings;
import dev.paddock.controlplane.SandboxReaper;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A sandbox's kept log ({@code GET /api/v1/sandboxes/{id}/logs}): its lifecycle events and its
 * agent's output, after delete too, followed live, pruned after the retention; and the reaper that
 * deletes sandboxes left ended (issue 13, point 5). Real agent processes of the process backend.
 */
class KeptLogsApiTest {
  private static PaddockClient client(ControlPlane plane) {
    return PaddockClient.connect(URI.create(plane.url()), ControlPlane.ADMIN_KEY);
  }

  private static SandboxInfo running(ControlPlane plane) {
    return client(plane).create(Optional.empty(), true, Duration.ofSeconds(60));
  }

  private static HttpResponse<String> logs(ControlPlane plane, String id) throws Exception {
    return plane.admin("GET", "/api/v1/sandboxes/" + id + "/logs", null);
  }

  /** The kept log's lifecycle events, in order (the words after {@code [paddock]}). */
  private static List<String> events(String log) {
    return log.lines()
        .filter(l -> l.contains(" [paddock] "))
        .map(l -> l.substring(l.indexOf(" [paddock] ") + 11).split(" ")[0])
        .toList();
  }

  @Nested
  class Kept {
    @RegisterExtension final ControlPlane plane = new ControlPlane();

    @Test
    void theLogOutlivesTheSandboxWithItsEventsAndItsAgentsOutput() throws Exception {
      SandboxInfo sandbox = running(plane);
      client(plane).pause(sandbox.id());
      client(plane).resume(sandbox.id());
      client(plane).delete(sandbox.id());
      assertThat(client(plane).get(sandbox.id())).isEmpty();

      HttpResponse<String> response = logs(plane, sandbox.id());

      assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
      assertThat(response.headers().firstValue("Content-Type"))
          .hasValue("text/plain; charset=utf-8");
      assertThat(events(response.body()))
          .containsExactly("created", "started", "paused", "resumed", "deleted");
      assertThat(response.body())
          .as("the agent's own output, copied before its directory went")
          .contains("agent-server listening on http://");
    }

    @Test
    void aStartThatFailsIsLoggedWithItsFailureClass() throws Exception {
      // 8 MiB is too little for the agent's JVM: its start fails (killed or exited).
      HttpResponse<String> created =
          plane.admin("POST", "/api/v1/sandboxes", "{\"resources\": {\"memory\": \"8m\"}}");
      assertThat(created.statusCode()).as(created.body()).isEqualTo(200);
      String id =
          (String)
              dev.paddock.http.Json.parseObject(created.body().getBytes(StandardCharsets.UTF_8))
                  .get("id");
      org.junit.jupiter.api.Assumptions.assumeFalse(
          created.body().contains("\"memory\"]") || created.body().contains("[\"memory\""),
          "this host cannot enforce a memory limit on the process backend");

      Awaitility.await("the start fails")
          .atMost(Duration.ofSeconds(60))
          .until(() -> plane.store().find(id).orElseThrow().status() == SandboxStatus.ERROR);

      String log = logs(plane, id).body();
      assertThat(events(log)).containsExactly("created", "failed");
      assertThat(log).containsPattern("\\[paddock\\] failed \\(class [A-Z_]+\\)");
    }

    @Test
    void anotherUserCannotReadTheLogNeitherBeforeNorAfterDelete() throws Exception {
      SandboxInfo sandbox = running(plane);
      var bob = client(plane).createUser("bob", false);
      String path = "/api/v1/sandboxes/" + sandbox.id() + "/logs";

      assertThat(plane.send("GET", path, Optional.of(bob.apiKey()), null).statusCode())
          .isEqualTo(404);
      client(plane).delete(sandbox.id());
      assertThat(plane.send("GET", path, Optional.of(bob.apiKey()), null).statusCode())
          .isEqualTo(404);
      assertThat(logs(plane, sandbox.id()).statusCode()).isEqualTo(200);
      assertThat(logs(plane, "never-was").statusCode()).isEqualTo(404);
    }

    @Test
    void followReceivesLinesWrittenAfterTheRequestStartedAndEndsWithTheSandbox() throws Exception {
      SandboxInfo sandbox = running(plane);
      List<String> lines = new CopyOnWriteArrayList<>();
      HttpRequest request =
          HttpRequest.newBuilder(
                  URI.create(
                      plane.url() + "/api/v1/sandboxes/" + sandbox.id() + "/logs?follow=true"))
              .header("Authorization", "Bearer " + ControlPlane.ADMIN_KEY)
              .build();
      HttpResponse<InputStream> response =
          plane.http.send(request, HttpResponse.BodyHandlers.ofInputStream());
      assertThat(response.statusCode()).isEqualTo(200);
      CompletableFuture<Void> reading =
          CompletableFuture.runAsync(() -> readLines(response.body(), lines));
      Awaitility.await("the lines so far")
          .atMost(Duration.ofSeconds(10))
          .until(() -> events(String.join("\n", lines)).contains("started"));

      client(plane).pause(sandbox.id());

      Awaitility.await("the pause, logged after the follow began")
          .atMost(Duration.ofSeconds(10))
          .until(() -> events(String.join("\n", lines)).contains("paused"));
      assertThat(reading).as("still following a paused sandbox").isNotDone();

      client(plane).delete(sandbox.id());

      Awaitility.await("the follow ends with the sandbox")
          .atMost(Duration.ofSeconds(10))
          .until(reading::isDone);
      assertThat(events(String.join("\n", lines))).endsWith("deleted");
    }

    private static void readLines(InputStream in, List<String> lines) {
      try (BufferedReader reader =
          new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
        for (String line; (line = reader.readLine()) != null; ) {
          lines.add(line);
        }
      } catch (IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }

    @Test
    void retentionPrunesTheLogsOfSandboxesDeletedLongerAgoOnly() throws Exception {
      SandboxInfo deleted = running(plane);
      SandboxInfo live = running(plane);
      client(plane).delete(deleted.id());

      assertThat(plane.logs().prune()).as("nothing is past the retention yet").isZero();
      assertThat(logs(plane, deleted.id()).statusCode()).isEqualTo(200);

      plane.clock().advance(Duration.ofDays(8));

      assertThat(plane.logs().prune()).isEqualTo(1);
      assertThat(logs(plane, deleted.id()).statusCode()).isEqualTo(404);
      assertThat(plane.dataDir().resolve("logs").resolve(deleted.id() + ".log")).doesNotExist();
      assertThat(logs(plane, live.id()).statusCode())
          .as("a live sandbox's log is kept however old")
          .isEqualTo(200);
    }

    @Test
    void theLogStopsAtItsCapWithALineSayingSo() throws Exception {
      SandboxInfo sandbox = running(plane);
      var kept = plane.dataDir().resolve("logs").resolve(sandbox.id() + ".log");
      // The agent's log grows past the cap behind its back (as a chatty agent's would).
      var agentLog =
          plane.dataDir().resolve("sandboxes").resolve(sandbox.id()).resolve("agent.log");
      Files.writeString(
          agentLog,
          ("x".repeat(99) + "\n").repeat((int) (ControlPlane.LOG_MAX_BYTES / 100) + 10),
          java.nio.file.StandardOpenOption.APPEND);

      String log = logs(plane, sandbox.id()).body();
      client(plane).delete(sandbox.id());

      assertThat(Files.size(kept)).isLessThanOrEqualTo(ControlPlane.LOG_MAX_BYTES);
      assertThat(log).contains("[paddock] log cap of " + ControlPlane.LOG_MAX_BYTES + " bytes");
      assertThat(events(logs(plane, sandbox.id()).body())).endsWith("deleted");
    }

    @Test
    void theReaperDeletesSandboxesLeftInErrorAndSparesLiveAndRecentOnes() throws Exception {
      SandboxInfo crashed = running(plane);
      SandboxInfo live = running(plane);
      String pid =
          plane
              .store()
              .find(crashed.id())
              .orElseThrow()
              .runtime()
              .orElseThrow()
              .attributes()
              .get("pid");
      ProcessHandle.of(Long.parseLong(pid)).orElseThrow().destroyForcibly();
      Awaitility.await("the control plane notices the dead agent")
          .atMost(Duration.ofSeconds(20))
          .untilAsserted(
              () -> {
                plane.reconcile();
                assertThat(plane.store().find(crashed.id()).orElseThrow().status())
                    .isIn(SandboxStatus.ERROR, SandboxStatus.MISSING);
              });
      SandboxReaper reaper =
          plane.reaper(new SandboxReaper.Ages(Duration.ofHours(24), Duration.ZERO));

      assertThat(reaper.reap()).as("ended, but only just").isEmpty();
      plane.clock().advance(Duration.ofHours(25));

      assertThat(reaper.reap()).containsExactly(crashed.id());
      assertThat(plane.store().find(crashed.id())).isEmpty();
      assertThat(plane.store().find(live.id())).isPresent();
      assertThat(events(logs(plane, crashed.id()).body())).endsWith("deleted");
    }
  }

  @Nested
  class Archiving {
    @RegisterExtension
    final ControlPlane plane =
        ControlPlane.archiving(
            new ArchiveSettings(
                true,
                true,
                ArchiveSettings.BOTH,
                ArchiveSettings.disabled().timeout(),
                ArchiveSettings.disabled().prefix()));

    @Test
    void reapingAPausedSandboxArchivesItsWorkspaceFirst() throws Exception {
      SandboxInfo sandbox = running(plane);
      client(plane).agent(sandbox).exec("echo kept > note.txt", 30, s -> {}, s -> {});
      client(plane).pause(sandbox.id());
      SandboxReaper reaper =
          plane.reaper(new SandboxReaper.Ages(Duration.ZERO, Duration.ofHours(1)));

      assertThat(reaper.reap()).isEmpty();
      plane.clock().advance(Duration.ofHours(2));

      assertThat(reaper.reap()).containsExactly(sandbox.id());
      assertThat(plane.store().find(sandbox.id())).isEmpty();
      assertThat(client(plane).archives(sandbox.id()))
          .as("archived before the delete")
          .isNotEmpty();
      assertThat(events(logs(plane, sandbox.id()).body()))
          .containsSubsequence("paused", "archived", "deleted");
    }
  }
}
