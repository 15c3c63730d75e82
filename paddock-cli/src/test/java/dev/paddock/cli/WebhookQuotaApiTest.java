package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.SandboxInfo;
import dev.paddock.client.PaddockClient;
import dev.paddock.server.ApiServerConfig;
import dev.paddock.store.WebhookEvent;
import dev.paddock.store.WebhookQuota;
import java.net.URI;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Webhook quotas over the REST API: request size, retention per conversation, conversations. */
class WebhookQuotaApiTest {
  @RegisterExtension
  final ControlPlane plane =
      new ControlPlane()
          .withApi(new ApiServerConfig(1000, new WebhookQuota(3, 200, 2), Optional.empty()));

  @Test
  void quotasBoundWhatOneSandboxCanStore() throws Exception {
    SandboxInfo sandbox =
        PaddockClient.connect(URI.create(plane.url()), ControlPlane.ADMIN_KEY)
            .create(Optional.empty(), true, Duration.ofSeconds(60));
    String key = sandbox.sessionApiKey().orElseThrow();

    HttpResponse<String> big =
        plane.asSandbox(
            "POST", "/api/v1/webhooks/events/c1", key, "[{\"x\":\"" + "a".repeat(1000) + "\"}]");
    assertThat(big.statusCode()).isEqualTo(413);
    assertThat(big.body()).contains("PADDOCK_WEBHOOK_MAX_REQUEST_BYTES");
    HttpResponse<String> oneEventTooBig =
        plane.asSandbox(
            "POST", "/api/v1/webhooks/events/c1", key, "[{\"x\":\"" + "a".repeat(300) + "\"}]");
    assertThat(oneEventTooBig.statusCode()).isEqualTo(413);
    assertThat(plane.store().events("c1", 0, 10)).as("nothing stored by a refusal").isEmpty();

    HttpResponse<String> first =
        plane.asSandbox("POST", "/api/v1/webhooks/events/c1", key, "[{\"n\":1},{\"n\":2}]");
    HttpResponse<String> second =
        plane.asSandbox("POST", "/api/v1/webhooks/events/c1", key, "[{\"n\":3},{\"n\":4}]");
    assertThat(first.body()).contains("\"dropped\":0");
    assertThat(second.statusCode()).isEqualTo(200);
    assertThat(second.body()).contains("\"stored\":2").contains("\"dropped\":1");
    assertThat(plane.store().events("c1", 0, 10))
        .extracting(WebhookEvent::json)
        .containsExactly("{\"n\":2}", "{\"n\":3}", "{\"n\":4}");

    assertThat(
            plane
                .asSandbox("POST", "/api/v1/webhooks/conversations", key, "{\"id\":\"c2\"}")
                .statusCode())
        .isEqualTo(200);
    HttpResponse<String> third =
        plane.asSandbox("POST", "/api/v1/webhooks/events/c3", key, "[{\"n\":1}]");
    assertThat(third.statusCode()).isEqualTo(429);
    assertThat(third.body()).contains("PADDOCK_WEBHOOK_MAX_CONVERSATIONS");
    assertThat(plane.store().events("c3", 0, 10)).isEmpty();
  }
}
