package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.SandboxInfo;
import dev.paddock.client.PaddockClient;
import dev.paddock.http.Json;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * On the process backend every sandbox shares the host's loopback: the gateway must open a port
 * route only to a port a process of that sandbox's own tree listens on, whoever else listens on the
 * same machine.
 */
class GatewayPortIsolationTest {
  @RegisterExtension final ControlPlane plane = new ControlPlane().withGateway();

  private final HttpClient http = HttpClient.newHttpClient();

  private PaddockClient admin() {
    return PaddockClient.connect(URI.create(plane.url()), ControlPlane.ADMIN_KEY);
  }

  private SandboxInfo running() {
    return admin().create(Optional.empty(), true, Duration.ofSeconds(60));
  }

  private HttpResponse<String> viaPort(SandboxInfo sandbox, int port) throws Exception {
    return http.send(
        HttpRequest.newBuilder(
                URI.create(plane.url() + "/sandboxes/" + sandbox.id() + "/port/" + port + "/"))
            .timeout(Duration.ofSeconds(20))
            .header("X-Session-API-Key", sandbox.sessionApiKey().orElseThrow())
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  private static String notListening(int port, SandboxInfo sandbox) {
    return "port "
        + port
        + " is not a port sandbox "
        + sandbox.id()
        + " listens on (see GET /api/v1/sandboxes/"
        + sandbox.id()
        + "/ports)";
  }

  @Test
  void aSandboxsPortIsReachableThroughItsOwnRouteOnlyAndHostPortsThroughNone(@TempDir Path dir)
      throws Exception {
    SandboxInfo a = running();
    SandboxInfo b = running();
    int port = SandboxWebServer.start(http, a, dir, "served-by-a");

    HttpResponse<String> own = viaPort(a, port);
    assertThat(own.statusCode()).as(own.body()).isEqualTo(200);
    assertThat(own.body()).isEqualTo("served-by-a");

    HttpResponse<String> across = viaPort(b, port);
    assertThat(across.statusCode()).isEqualTo(403);
    assertThat(Json.parseObject(across.body().getBytes()))
        .isEqualTo(Map.of("detail", notListening(port, b)));
    // A signed URL of B's for that port does not open it either.
    String signed =
        (String)
            Json.parseObject(
                    plane
                        .admin(
                            "POST", "/api/v1/sandboxes/" + b.id() + "/ports/" + port + "/url", null)
                        .body()
                        .getBytes())
                .get("url");
    HttpResponse<String> bySignedUrl =
        http.send(
            HttpRequest.newBuilder(URI.create(signed)).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(bySignedUrl.statusCode()).isEqualTo(403);

    try (ServerSocket host = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      int hostPort = host.getLocalPort(); // the test's own, in no sandbox
      assertThat(viaPort(a, hostPort).statusCode()).isEqualTo(403);
      assertThat(viaPort(b, hostPort).statusCode()).isEqualTo(403);
    }
  }

  @Test
  @SuppressWarnings("unchecked")
  void theOwnerListsTheSandboxsPortsWithTheirGatewayUrls(@TempDir Path dir) throws Exception {
    SandboxInfo a = running();
    SandboxInfo b = running();
    int port = SandboxWebServer.start(http, a, dir, "listed");

    HttpResponse<String> listed =
        plane.admin("GET", "/api/v1/sandboxes/" + a.id() + "/ports", null);

    assertThat(listed.statusCode()).as(listed.body()).isEqualTo(200);
    List<Map<String, Object>> ports =
        (List<Map<String, Object>>) Json.parseObject(listed.body().getBytes()).get("ports");
    assertThat(ports)
        .containsExactly(
            Map.of(
                "port",
                port,
                "address",
                "127.0.0.1",
                "url",
                plane.url() + "/sandboxes/" + a.id() + "/port/" + port,
                "public",
                false));
    HttpResponse<String> other = plane.admin("GET", "/api/v1/sandboxes/" + b.id() + "/ports", null);
    assertThat(other.body()).isEqualTo("{\"ports\":[]}");

    admin().pause(a.id());
    HttpResponse<String> paused =
        plane.admin("GET", "/api/v1/sandboxes/" + a.id() + "/ports", null);
    assertThat(paused.statusCode()).isEqualTo(409);
    assertThat(paused.body()).contains("sandbox " + a.id() + " is paused; resume it");
    assertThat(plane.admin("GET", "/api/v1/sandboxes/nope/ports", null).statusCode())
        .isEqualTo(404);
    assertThat(
            plane
                .send("GET", "/api/v1/sandboxes/" + b.id() + "/ports", Optional.empty(), null)
                .statusCode())
        .isEqualTo(401);
  }
}
