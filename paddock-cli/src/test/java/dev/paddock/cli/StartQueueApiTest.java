package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.StartRequest;
import dev.paddock.client.PaddockClient;
import dev.paddock.http.Json;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The start queue over HTTP: {@code queue_timeout} on the create route, one slot; the gateway on,
 * as {@code paddock server} runs by default (its URL rewriting once dropped the queue place).
 */
class StartQueueApiTest {
  @RegisterExtension
  final ControlPlane plane = new ControlPlane(b -> b.maxSandboxes(1)).withGateway();

  private final ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor();

  @AfterEach
  void stopThreads() {
    threads.close();
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> json(HttpResponse<String> response) {
    return (Map<String, Object>) Json.parseAny(response.body().getBytes(StandardCharsets.UTF_8));
  }

  @Test
  void queueTimeoutThatIsNotAWholeNumberOfSecondsWithinBoundsIsA400SayingWhy() throws Exception {
    Map<String, String> expected =
        Map.of(
            "abc", "must be a whole number of seconds, got 'abc'",
            "1.5", "must be a whole number of seconds, got '1.5'",
            "-3", "must be at least 1 second, got -3",
            "0", "must be at least 1 second, got 0",
            "99999", "longer than the operator allows (600 s, PADDOCK_QUEUE_MAX_TIMEOUT)");
    for (var value : expected.entrySet()) {
      var response = plane.admin("POST", "/api/v1/sandboxes?queue_timeout=" + value.getKey(), null);
      assertThat(response.statusCode()).as(value.getKey()).isEqualTo(400);
      assertThat((String) json(response).get("detail"))
          .contains("queue_timeout")
          .contains(value.getValue());
    }
    var all = json(plane.admin("GET", "/api/v1/sandboxes/search", null));
    assertThat((List<?>) all.get("items")).isEmpty();
  }

  @Test
  void queuedCreateShowsAsStartingWithItsPlaceAndStartsWhenTheSlotIsFreed() throws Exception {
    var first = json(plane.admin("POST", "/api/v1/sandboxes?wait=true&sandbox_id=first", null));
    assertThat(first.get("status")).isEqualTo("RUNNING");
    PaddockClient client = PaddockClient.connect(URI.create(plane.url()), ControlPlane.ADMIN_KEY);
    // The SDK's create sends queue_timeout and blocks while the create waits.
    CompletableFuture<SandboxInfo> queued =
        CompletableFuture.supplyAsync(
            () ->
                client.create(
                    StartRequest.builder()
                        .sandboxId("next")
                        .queueTimeout(Duration.ofSeconds(120))
                        .build(),
                    true,
                    Duration.ofSeconds(60)),
            threads);

    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> plane.admin("GET", "/api/v1/sandboxes/next", null).statusCode() == 200);
    Map<String, Object> waiting = json(plane.admin("GET", "/api/v1/sandboxes/next", null));
    // OpenHands' enum has no QUEUED: the wire says STARTING and carries the place.
    assertThat(waiting.get("status")).isEqualTo("STARTING");
    assertThat(waiting.get("session_api_key")).isNull();
    assertThat(waiting.get("status_detail"))
        .isEqualTo("waiting in the start queue for a free slot");
    @SuppressWarnings("unchecked")
    Map<String, Object> place = (Map<String, Object>) waiting.get("queue");
    assertThat(((Number) place.get("position")).intValue()).isEqualTo(1);
    assertThat(((Number) place.get("length")).intValue()).isEqualTo(1);
    assertThat(place.get("deadline")).isNotNull();
    var filtered = json(plane.admin("GET", "/api/v1/sandboxes/search?status=QUEUED", null));
    assertThat((List<?>) filtered.get("items")).hasSize(1);
    assertThat(plane.admin("GET", "/metrics", null).body()).contains("paddock_queue_length 1\n");
    SandboxInfo seen = client.get("next").orElseThrow();
    assertThat(seen.status()).isEqualTo(SandboxStatus.QUEUED);
    assertThat(seen.queue().orElseThrow().position()).isEqualTo(1);
    assertThat(queued).isNotDone();

    assertThat(plane.admin("DELETE", "/api/v1/sandboxes/first", null).statusCode()).isEqualTo(200);

    SandboxInfo admitted = queued.get();
    assertThat(admitted.status()).isEqualTo(SandboxStatus.RUNNING);
    assertThat(admitted.queue()).isEmpty();
    assertThat(admitted.sessionApiKey()).isPresent();
    assertThat(json(plane.admin("GET", "/api/v1/sandboxes/next", null)))
        .containsEntry("queue", null);
    String metrics = plane.admin("GET", "/metrics", null).body();
    assertThat(metrics).contains("paddock_queue_length 0\n");
  }
}
