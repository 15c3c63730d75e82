package dev.paddock.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.SandboxInfo;
import dev.paddock.client.AgentClient;
import dev.paddock.client.PaddockClient;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.net.http.WebSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The sandbox gateway end to end on the process backend: the SDK client, raw OpenHands-style calls
 * and a WebSocket reach agents only through the control plane's address; a web server started in a
 * sandbox is reachable by a signed URL and refused without one (the port checks against other
 * sandboxes and host services are in GatewayPortIsolationTest); paused and unknown sandboxes are
 * answered at the door.
 */
class GatewayApiTest {
  @RegisterExtension final ControlPlane plane = new ControlPlane().withGateway();

  private final HttpClient http = HttpClient.newHttpClient();

  private PaddockClient admin() {
    return PaddockClient.connect(URI.create(plane.url()), ControlPlane.ADMIN_KEY);
  }

  @Test
  void exposedAgentUrlGoesThroughTheGatewayForExecUploadAndDownload(@TempDir Path dir)
      throws Exception {
    SandboxInfo running = admin().create(Optional.empty(), true, Duration.ofSeconds(60));
    assertThat(running.agentServerUrl())
        .contains(plane.url() + "/sandboxes/" + running.id() + "/agent");

    AgentClient agent = admin().agent(running);
    StringBuilder out = new StringBuilder();
    assertThat(agent.exec("echo through; exit 3", 30, out::append, err -> {})).isEqualTo(3);
    assertThat(out).hasToString("through\n");

    Path local = dir.resolve("big.bin");
    byte[] data = new byte[3 << 20];
    new java.util.Random(7).nextBytes(data);
    Files.write(local, data);
    agent.upload(local, "/tmp/gw-" + running.id() + ".bin");
    Path back = dir.resolve("back.bin");
    agent.download("/tmp/gw-" + running.id() + ".bin", back);
    assertThat(Files.readAllBytes(back)).isEqualTo(data);
    agent.exec("rm -f /tmp/gw-" + running.id() + ".bin", 10, s -> {}, s -> {});
  }

  @Test
  void openHandsStyleClientPollsAndExecutesThroughExposedUrls() throws Exception {
    HttpResponse<String> created = plane.admin("POST", "/api/v1/sandboxes", "{}");
    assertThat(created.statusCode()).isEqualTo(200);
    String id = (String) dev.paddock.http.Json.parseObject(created.body().getBytes()).get("id");
    // OpenHands polls the batch get until the sandbox is RUNNING.
    Awaitility.await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () -> plane.admin("GET", "/api/v1/sandboxes?id=" + id, null).body(),
            b -> b.contains("RUNNING"));
    String body = plane.admin("GET", "/api/v1/sandboxes/" + id, null).body();
    Map<String, Object> info = dev.paddock.http.Json.parseObject(body.getBytes());
    @SuppressWarnings("unchecked")
    String agentUrl =
        (String) ((java.util.List<Map<String, Object>>) info.get("exposed_urls")).get(0).get("url");
    String key = (String) info.get("session_api_key");
    assertThat(agentUrl).startsWith(plane.url() + "/sandboxes/" + id + "/agent");

    HttpResponse<String> executed =
        http.send(
            HttpRequest.newBuilder(URI.create(agentUrl + "/api/bash/execute_bash_command"))
                .header("X-Session-API-Key", key)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"command\": \"echo open-hands\"}"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(executed.statusCode()).isEqualTo(200);
    assertThat(executed.body()).contains("open-hands");

    HttpResponse<String> withoutKey =
        http.send(
            HttpRequest.newBuilder(URI.create(agentUrl + "/api/bash/bash_events/search")).build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(withoutKey.statusCode()).isEqualTo(401);
  }

  @Test
  void aWebSocketClientReachesBashEventsThroughTheGateway() throws Exception {
    SandboxInfo running = admin().create(Optional.empty(), true, Duration.ofSeconds(60));
    String ws =
        running.agentServerUrl().orElseThrow().replaceFirst("^http", "ws")
            + "/sockets/bash-events?session_api_key="
            + running.sessionApiKey().orElseThrow();
    StringBuilder received = new StringBuilder();
    CompletableFuture<Void> sawOutput = new CompletableFuture<>();
    WebSocket socket =
        http.newWebSocketBuilder()
            .buildAsync(
                URI.create(ws),
                new WebSocket.Listener() {
                  @Override
                  public CompletionStage<?> onText(WebSocket s, CharSequence data, boolean last) {
                    synchronized (received) {
                      received.append(data);
                      if (received.toString().contains("tunnelled-42ok")) {
                        sawOutput.complete(null);
                      }
                    }
                    s.request(1);
                    return null;
                  }
                })
            .get(30, TimeUnit.SECONDS);
    socket
        .sendText("{\"command\": \"echo tunnelled-$((40+2))ok\"}", true)
        .get(10, TimeUnit.SECONDS);
    // The shell expands the arithmetic, so the text can only come back from the sandbox.
    sawOutput.get(30, TimeUnit.SECONDS);
    socket.sendClose(WebSocket.NORMAL_CLOSURE, "done").get(10, TimeUnit.SECONDS);
  }

  @Test
  void aWebServerInASandboxIsReachableBySignedUrlOnly(@TempDir Path dir) throws Exception {
    SandboxInfo running = admin().create(Optional.empty(), true, Duration.ofSeconds(60));
    int port = SandboxWebServer.start(http, running, dir, "hello-from-" + running.id());
    String portUrl = plane.url() + "/sandboxes/" + running.id() + "/port/" + port + "/";
    Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                get(portUrl, Map.of("X-Session-API-Key", running.sessionApiKey().orElseThrow()))
                    .statusCode(),
            s -> s == 200);

    assertThat(get(portUrl, Map.of()).statusCode()).isEqualTo(401);
    assertThat(get(portUrl + "?paddock_token=forged.token", Map.of()).statusCode()).isEqualTo(401);

    HttpResponse<String> signed =
        plane.admin(
            "POST",
            "/api/v1/sandboxes/" + running.id() + "/ports/" + port + "/url",
            "{\"expires_in\": 600}");
    assertThat(signed.statusCode()).isEqualTo(200);
    String url = (String) dev.paddock.http.Json.parseObject(signed.body().getBytes()).get("url");
    HttpResponse<String> page = get(url, Map.of());
    assertThat(page.statusCode()).isEqualTo(200);
    assertThat(page.body()).isEqualTo("hello-from-" + running.id());
    assertThat(page.headers().firstValue("Set-Cookie"))
        .hasValueSatisfying(c -> assertThat(c).startsWith("paddock_token="));

    // The token opens this port of this sandbox only.
    String token = url.substring(url.indexOf("paddock_token=") + "paddock_token=".length());
    String otherPort =
        plane.url()
            + "/sandboxes/"
            + running.id()
            + "/port/"
            + (port + 1)
            + "/?paddock_token="
            + token;
    assertThat(get(otherPort, Map.of()).statusCode()).isEqualTo(401);
  }

  @Test
  void pausedUnknownAndMalformedSandboxRoutesAreAnsweredAtTheDoor() throws Exception {
    SandboxInfo running = admin().create(Optional.empty(), true, Duration.ofSeconds(60));
    String agentUrl = running.agentServerUrl().orElseThrow();
    admin().pause(running.id());

    long started = System.nanoTime();
    HttpResponse<String> paused = get(agentUrl + "/api/bash/bash_events/search", Map.of());
    assertThat(paused.statusCode()).isEqualTo(409);
    assertThat(paused.body()).contains("sandbox " + running.id() + " is paused; resume it");
    assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(5));

    HttpResponse<String> missing = get(plane.url() + "/sandboxes/nope/agent/alive", Map.of());
    assertThat(missing.statusCode()).isEqualTo(404);
    assertThat(missing.body()).contains("\"detail\"");
    assertThat(
            get(plane.url() + "/sandboxes/" + running.id() + "/port/99999/", Map.of()).statusCode())
        .isEqualTo(404);

    SandboxInfo resumed = admin().resume(running.id());
    assertThat(resumed.agentServerUrl()).contains(agentUrl);
    assertThat(get(agentUrl + "/alive", Map.of()).statusCode()).isEqualTo(200);
  }

  private HttpResponse<String> get(String url, Map<String, String> headers) throws Exception {
    HttpRequest.Builder request =
        HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(20));
    headers.forEach(request::header);
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  private static int freePort() throws Exception {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    }
  }

  @Test
  void aBrowserStyleWebSocketReachesATerminalThroughTheGateway() throws Exception {
    SandboxInfo running = admin().create(Optional.empty(), true, Duration.ofSeconds(60));
    String agentUrl = running.agentServerUrl().orElseThrow();
    String key = running.sessionApiKey().orElseThrow();
    HttpResponse<String> terminal =
        http.send(
            HttpRequest.newBuilder(URI.create(agentUrl + "/api/terminals"))
                .header("X-Session-API-Key", key)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString("{\"command\": \"bash --norc -i\"}"))
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(terminal.statusCode()).as(terminal.body()).isIn(200, 201);
    String terminalId =
        (String) dev.paddock.http.Json.parseObject(terminal.body().getBytes()).get("id");

    // As a browser does it: no custom header on the upgrade, the key in the query, an Origin.
    String ws =
        agentUrl.replaceFirst("^http", "ws")
            + "/api/terminals/"
            + terminalId
            + "/ws?session_api_key="
            + key;
    StringBuilder screen = new StringBuilder();
    CompletableFuture<String> connected = new CompletableFuture<>();
    CompletableFuture<Void> answered = new CompletableFuture<>();
    WebSocket socket =
        http.newWebSocketBuilder()
            .header("Origin", plane.url())
            .header("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0")
            .buildAsync(
                URI.create(ws),
                new WebSocket.Listener() {
                  @Override
                  public CompletionStage<?> onText(WebSocket s, CharSequence data, boolean last) {
                    connected.complete(data.toString());
                    s.request(1);
                    return null;
                  }

                  @Override
                  public CompletionStage<?> onBinary(
                      WebSocket s, java.nio.ByteBuffer data, boolean last) {
                    synchronized (screen) {
                      screen.append(java.nio.charset.StandardCharsets.UTF_8.decode(data));
                      if (screen.toString().contains("pty-42-ok")) {
                        answered.complete(null);
                      }
                    }
                    s.request(1);
                    return null;
                  }
                })
            .get(30, TimeUnit.SECONDS);
    assertThat(connected.get(30, TimeUnit.SECONDS)).contains("\"type\":\"connected\"");
    socket
        .sendBinary(
            java.nio.ByteBuffer.wrap(
                "echo pty-$((6*7))-ok\n".getBytes(java.nio.charset.StandardCharsets.UTF_8)),
            true)
        .get(10, TimeUnit.SECONDS);
    // The shell expands the arithmetic: the text can only come from the terminal.
    answered.get(30, TimeUnit.SECONDS);
    socket.sendClose(WebSocket.NORMAL_CLOSURE, "done").get(10, TimeUnit.SECONDS);
  }

  @Test
  void theOwnerOpensAPortToEveryoneAndClosesItAgain(@TempDir Path dir) throws Exception {
    SandboxInfo running = admin().create(Optional.empty(), true, Duration.ofSeconds(60));
    int port = SandboxWebServer.start(http, running, dir, "public-" + running.id());
    String portUrl = plane.url() + "/sandboxes/" + running.id() + "/port/" + port + "/";
    String route = "/api/v1/sandboxes/" + running.id() + "/ports/" + port;
    assertThat(get(portUrl, Map.of()).statusCode()).isEqualTo(401);

    HttpResponse<String> opened = plane.admin("PUT", route, "{\"public\": true}");
    assertThat(opened.statusCode()).as(opened.body()).isEqualTo(200);
    assertThat(dev.paddock.http.Json.parseObject(opened.body().getBytes()))
        .containsEntry("public", true);
    Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> get(portUrl, Map.of()).statusCode(), s -> s == 200);
    assertThat(get(portUrl, Map.of()).body()).isEqualTo("public-" + running.id());
    assertThat(admin().get(running.id()).orElseThrow().settings().publicPorts())
        .containsExactly(port);
    assertThat(plane.admin("GET", "/api/v1/sandboxes/" + running.id() + "/ports", null).body())
        .contains("\"public\":true");

    HttpResponse<String> bad = plane.admin("PUT", route, "{\"public\": \"yes\"}");
    assertThat(bad.statusCode()).isEqualTo(422);
    assertThat(bad.body()).contains("\"detail\"");
    assertThat(plane.admin("PUT", route, "{\"public\": false}").statusCode()).isEqualTo(200);
    assertThat(get(portUrl, Map.of()).statusCode()).isEqualTo(401);
  }

  @Test
  void anAutoResumeSandboxWakesOnItsSignedUrlAndAnotherIsAnswered409(@TempDir Path dir)
      throws Exception {
    SandboxInfo running =
        admin()
            .create(
                dev.paddock.api.StartRequest.builder().autoResume(true).build(),
                true,
                Duration.ofSeconds(60));
    assertThat(running.settings().autoResume()).isTrue();
    int port = SandboxWebServer.start(http, running, dir, "woken-" + running.id());
    HttpResponse<String> signed =
        plane.admin("POST", "/api/v1/sandboxes/" + running.id() + "/ports/" + port + "/url", "");
    String url = (String) dev.paddock.http.Json.parseObject(signed.body().getBytes()).get("url");
    Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> get(url, Map.of()).statusCode(), s -> s == 200);
    admin().pause(running.id());
    assertThat(admin().get(running.id()).orElseThrow().status())
        .isEqualTo(dev.paddock.api.SandboxStatus.PAUSED);

    HttpResponse<String> page = get(url, Map.of());

    assertThat(page.statusCode()).as(page.body()).isEqualTo(200);
    assertThat(page.body()).isEqualTo("woken-" + running.id());
    assertThat(admin().get(running.id()).orElseThrow().status())
        .isEqualTo(dev.paddock.api.SandboxStatus.RUNNING);

    SandboxInfo plain = admin().create(Optional.empty(), true, Duration.ofSeconds(60));
    int plainPort = SandboxWebServer.start(http, plain, dir, "plain-" + plain.id());
    HttpResponse<String> plainSigned =
        plane.admin("POST", "/api/v1/sandboxes/" + plain.id() + "/ports/" + plainPort + "/url", "");
    String plainUrl =
        (String) dev.paddock.http.Json.parseObject(plainSigned.body().getBytes()).get("url");
    admin().pause(plain.id());
    assertThat(get(plainUrl, Map.of()).statusCode()).isEqualTo(409);
  }
}
