package dev.paddock.server.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.paddock.api.ExposedUrl;
import dev.paddock.api.KeyDigest;
import dev.paddock.api.SandboxSettings;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeRequest;
import dev.paddock.api.spi.RuntimeState;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.http.HttpServerConfig;
import dev.paddock.http.HttpServers;
import dev.paddock.http.Json;
import dev.paddock.http.Router;
import dev.paddock.http.WebSocket;
import dev.paddock.http.WebSocketListener;
import dev.paddock.store.SandboxRecord;
import dev.paddock.store.SandboxStore;
import dev.paddock.store.SandboxStores;
import dev.paddock.store.StoreException;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The gateway in front of a real agent-like server (Paddock's HTTP layer on port 0), with the real
 * embedded store and a backend fake that only says where the agent listens: streaming, framing,
 * headers, keep-alive, tunnels and the state checks at the door.
 */
class GatewayTest {
  private static final String KEY = "session-key-of-sb-1-0123456789abcdef";
  private static final String SECRET = "a-test-master-secret-of-at-least-32-bytes";

  private Path dataDir;
  private SandboxStore store;
  private HttpServer agent;
  private HttpServer front;
  private Gateway gateway;
  private final AtomicInteger inspections = new AtomicInteger();

  /** The ports the fake agent says its sandbox listens on. */
  private final java.util.Set<Integer> listed = ConcurrentHashMap.newKeySet();

  private final AtomicInteger portListings = new AtomicInteger();
  private final Map<String, String> seenHeaders = new ConcurrentHashMap<>();
  private final CountDownLatch secondLine = new CountDownLatch(1);
  private final HttpClient http = HttpClient.newHttpClient();

  /** Auto-resumes asked of the control plane, and what each does (by default: mark it RUNNING). */
  private final AtomicInteger resumes = new AtomicInteger();

  private volatile SandboxResumer resumeAction = this::markRunning;

  @BeforeEach
  void start() throws Exception {
    dataDir = Files.createTempDirectory("paddock-gateway-test-");
    agent = HttpServers.create(HttpServerConfig.builder(loopback()).build());
    agent.createContext("/", agentRouter());
    agent.start();
    listed.add(agent.getAddress().getPort());
    startFront();
    insert("sb-1", SandboxStatus.RUNNING);
  }

  /** The store, the gateway and the server in front, as a control plane (re)starts them. */
  private void startFront() throws Exception {
    store = SandboxStores.openEmbedded(dataDir);
    gateway =
        Gateway.create(
            store,
            new FakeBackend(),
            id -> id.equals("sb-2") ? Optional.empty() : Optional.of(KEY),
            id -> {
              resumes.incrementAndGet();
              resumeAction.resume(id);
            },
            GatewayConfig.builder(SECRET).build());
    front = HttpServers.create(HttpServerConfig.builder(loopback()).build());
    front.createContext(
        "/",
        gateway.inFrontOf(
            exchange -> {
              exchange.sendResponseHeaders(418, -1);
              exchange.close();
            }));
    front.start();
  }

  private void stopFront() {
    front.stop(0);
    gateway.close();
    store.close();
  }

  /** What the control plane's resume leaves in the store: RUNNING with a new key. */
  private void markRunning(String id) {
    SandboxRecord paused = store.find(id).orElseThrow();
    store.update(
        paused
            .withStatus(SandboxStatus.RUNNING, Optional.empty())
            .withSessionKeyHash(Optional.of(KeyDigest.sha256Hex(KEY + id))));
  }

  @AfterEach
  void stop() throws Exception {
    stopFront();
    agent.stop(0);
    http.shutdownNow();
    try (var paths = Files.walk(dataDir)) {
      for (Path p : paths.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }

  private Router agentRouter() {
    Router router = Router.builder().build();
    router.add(
        "GET",
        "/api/ports",
        call -> {
          if (!call.header("X-Session-API-Key").equals(Optional.of(KEY))) {
            call.sendJson(401, Map.of("detail", "missing or invalid X-Session-API-Key"));
            return;
          }
          portListings.incrementAndGet();
          call.sendJson(
              200,
              Map.of(
                  "ports",
                  listed.stream().map(p -> Map.of("port", p, "address", "127.0.0.1")).toList()));
        });
    router.add(
        "GET",
        "/headers",
        call -> {
          for (String name :
              List.of(
                  "X-Forwarded-For",
                  "X-Forwarded-Proto",
                  "X-Forwarded-Prefix",
                  "X-Drop-Me",
                  "Keep-Alive",
                  "X-Session-API-Key",
                  "X-Kept")) {
            call.header(name).ifPresent(v -> seenHeaders.put(name, v));
          }
          call.sendJson(200, Map.of("path", call.path()));
        });
    router.add(
        "GET",
        "/who",
        call -> {
          call.sendJson(200, Map.of("ok", true));
        });
    router.add(
        "GET",
        "/stream",
        call -> {
          try (OutputStream out = call.stream(200, "application/x-ndjson", 0)) {
            out.write("{\"n\":1}\n".getBytes(StandardCharsets.UTF_8));
            out.flush();
            // The second line waits until the client has the first one through the gateway.
            if (!secondLine.await(20, TimeUnit.SECONDS)) {
              return;
            }
            out.write("{\"n\":2}\n".getBytes(StandardCharsets.UTF_8));
          }
        });
    router.add(
        "POST",
        "/count",
        call -> {
          long n = 0;
          java.security.MessageDigest sha = java.security.MessageDigest.getInstance("SHA-256");
          byte[] buffer = new byte[8192];
          try (InputStream in = call.body()) {
            int r;
            while ((r = in.read(buffer)) >= 0) {
              sha.update(buffer, 0, r);
              n += r;
            }
          }
          call.sendJson(
              200, Map.of("bytes", n, "sha", java.util.HexFormat.of().formatHex(sha.digest())));
        });
    router.websocket(
        "/echo",
        call -> {
          seenHeaders.put("socket key header", call.header("X-Session-API-Key").orElse("none"));
          seenHeaders.put("socket key query", call.query("session_api_key").orElse("none"));
          return new WebSocketListener() {
            @Override
            public void onText(WebSocket socket, String text) {
              try {
                socket.sendText("echo:" + text);
              } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
              }
            }
          };
        });
    return router;
  }

  private final class FakeBackend implements SandboxBackend {
    @Override
    public String name() {
      return "fake";
    }

    @Override
    public RuntimeHandle start(RuntimeRequest request) {
      throw new UnsupportedOperationException("the gateway never starts sandboxes");
    }

    @Override
    public RuntimeState inspect(RuntimeHandle handle) {
      inspections.incrementAndGet();
      String url = "http://127.0.0.1:" + agent.getAddress().getPort();
      return new RuntimeState(
          SandboxStatus.RUNNING,
          List.of(new ExposedUrl(ExposedUrl.AGENT_SERVER, url, agent.getAddress().getPort())),
          Optional.empty());
    }

    @Override
    public void pause(RuntimeHandle handle) {}

    @Override
    public RuntimeHandle resume(RuntimeHandle handle) {
      return handle;
    }

    @Override
    public void destroy(RuntimeHandle handle) {}

    @Override
    public List<RuntimeHandle> list() {
      return List.of();
    }
  }

  private void insert(String id, SandboxStatus status) {
    insert(id, status, SandboxSettings.NONE);
  }

  private void insert(String id, SandboxStatus status, SandboxSettings settings) {
    Instant now = Instant.now();
    store.insert(
        new SandboxRecord(
            id,
            Optional.of("user-1"),
            "default",
            status,
            status == SandboxStatus.PAUSED
                ? Optional.empty() // a pause revokes the key
                : Optional.of(KeyDigest.sha256Hex(id.equals("sb-1") ? KEY : KEY + id)),
            Optional.of(new RuntimeHandle(id, "fake", Map.of())),
            Optional.empty(),
            now,
            now,
            0,
            settings,
            Optional.empty(),
            Optional.empty(),
            0));
  }

  private static InetSocketAddress loopback() {
    return new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
  }

  private String url(String path) {
    return "http://127.0.0.1:" + front.getAddress().getPort() + path;
  }

  private HttpResponse<String> get(String path, String... headers) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url(path)));
    if (headers.length > 0) {
      request.headers(headers);
    }
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void ndjsonLinesPassAsTheyArriveNotWhenTheStreamEnds() throws Exception {
    HttpResponse<InputStream> response =
        http.send(
            HttpRequest.newBuilder(URI.create(url("/sandboxes/sb-1/agent/stream"))).build(),
            HttpResponse.BodyHandlers.ofInputStream());
    try (BufferedReader lines =
        new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
      // The upstream holds its second line until this first one has arrived: a buffering
      // gateway would deadlock here until the upstream gave up.
      assertThat(lines.readLine()).isEqualTo("{\"n\":1}");
      secondLine.countDown();
      assertThat(lines.readLine()).isEqualTo("{\"n\":2}");
      assertThat(lines.readLine()).isNull();
    }
    assertThat(response.headers().firstValue("Content-Type")).contains("application/x-ndjson");
  }

  @Test
  void hopByHopHeadersAreDroppedAndForwardingHeadersAdded() throws Exception {
    HttpResponse<String> response =
        get(
            "/sandboxes/sb-1/agent/headers?x=1",
            "X-Drop-Me",
            "1",
            "X-Kept",
            "yes",
            "X-Session-API-Key",
            KEY);
    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(Json.parseObject(response.body().getBytes())).containsEntry("path", "/headers");
    assertThat(seenHeaders)
        .containsEntry("X-Forwarded-For", "127.0.0.1")
        .containsEntry("X-Forwarded-Proto", "http")
        .containsEntry("X-Forwarded-Prefix", "/sandboxes/sb-1/agent")
        .containsEntry("X-Kept", "yes")
        .containsEntry("X-Session-API-Key", KEY); // the agent checks it itself
    seenHeaders.clear();
    // A header the Connection header names is hop-by-hop too (RFC 9110 §7.6.1).
    try (java.net.Socket raw = new java.net.Socket("127.0.0.1", front.getAddress().getPort())) {
      raw.getOutputStream()
          .write(
              ("GET /sandboxes/sb-1/agent/headers HTTP/1.1\r\nHost: h\r\n"
                      + "Connection: close, X-Drop-Me\r\nX-Drop-Me: 1\r\nKeep-Alive: 5\r\n\r\n")
                  .getBytes(StandardCharsets.US_ASCII));
      String reply = new String(raw.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
      assertThat(reply).startsWith("HTTP/1.1 200");
    }
    assertThat(seenHeaders).doesNotContainKeys("X-Drop-Me", "Keep-Alive");
  }

  @Test
  void aChunkedUploadArrivesWholeWithBoundedBuffers() throws Exception {
    byte[] data = new byte[6 << 20];
    new java.util.Random(3).nextBytes(data);
    HttpResponse<String> response =
        http.send(
            HttpRequest.newBuilder(URI.create(url("/sandboxes/sb-1/agent/count")))
                .POST(
                    HttpRequest.BodyPublishers.ofInputStream(
                        () -> new java.io.ByteArrayInputStream(data))) // no length: chunked
                .build(),
            HttpResponse.BodyHandlers.ofString());
    assertThat(response.statusCode()).isEqualTo(200);
    Map<String, Object> body = Json.parseObject(response.body().getBytes());
    assertThat(((Number) body.get("bytes")).longValue()).isEqualTo(data.length);
    assertThat(body.get("sha"))
        .isEqualTo(
            java.util.HexFormat.of()
                .formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(data)));
  }

  @Test
  void sequentialRequestsReuseOneUpstreamConnectionAndOneInspection() throws Exception {
    for (int i = 0; i < 20; i++) {
      assertThat(get("/sandboxes/sb-1/agent/who").statusCode()).isEqualTo(200);
    }
    assertThat(inspections).hasValue(1); // the address is cached per record version
  }

  // The store unavailable (issue 15: PostgreSQL stopped; here the store is closed, so every call
  // fails with a StoreException). The gateway used to let the exception escape: no answer at all.
  @Test
  void whileTheStoreCannotBeReadAKnownAgentRouteGoesOnAndTheRestAnswer503() throws Exception {
    insert("sb-3", SandboxStatus.RUNNING);
    int port = agent.getAddress().getPort();
    assertThat(get("/sandboxes/sb-1/agent/who").statusCode()).isEqualTo(200);
    assertThat(get("/sandboxes/sb-1/port/" + port + "/who", "X-Session-API-Key", KEY).statusCode())
        .isEqualTo(200);

    store.close();

    assertThat(get("/sandboxes/sb-1/agent/who").statusCode())
        .as("the agent of a sandbox routed before: it checks its own key")
        .isEqualTo(200);
    for (String path :
        List.of("/sandboxes/sb-3/agent/who", "/sandboxes/sb-1/port/" + port + "/who")) {
      HttpResponse<String> refused = get(path, "X-Session-API-Key", KEY);
      assertThat(refused.statusCode()).as(path).isEqualTo(503);
      assertThat(refused.headers().firstValue("Retry-After")).as(path).hasValue("1");
      assertThat(refused.body())
          .as(path)
          .contains("\"detail\"", "the store is unavailable right now")
          .doesNotContain("Exception", "closed");
    }
  }

  @Test
  void aWebSocketIsTunnelledBothWays() throws Exception {
    CompletableFuture<String> echoed = new CompletableFuture<>();
    java.net.http.WebSocket socket =
        http.newWebSocketBuilder()
            .buildAsync(
                URI.create(url("/sandboxes/sb-1/agent/echo").replaceFirst("^http", "ws")),
                new java.net.http.WebSocket.Listener() {
                  @Override
                  public CompletionStage<?> onText(
                      java.net.http.WebSocket s, CharSequence data, boolean last) {
                    echoed.complete(data.toString());
                    return null;
                  }
                })
            .get(10, TimeUnit.SECONDS);
    socket.sendText("hello", true).get(10, TimeUnit.SECONDS);
    assertThat(echoed.get(10, TimeUnit.SECONDS)).isEqualTo("echo:hello");
    assertThat(gateway.scrape())
        .contains("paddock_gateway_websockets_open{route=\"/sandboxes/{id}/agent/*\"} 1");
    socket.sendClose(java.net.http.WebSocket.NORMAL_CLOSURE, "bye").get(10, TimeUnit.SECONDS);
  }

  @Test
  void pausedStartingAndMissingSandboxesAreAnsweredFromTheStoreAlone() throws Exception {
    insert("sb-paused", SandboxStatus.PAUSED);
    insert("sb-starting", SandboxStatus.STARTING);
    HttpResponse<String> paused = get("/sandboxes/sb-paused/agent/alive");
    assertThat(paused.statusCode()).isEqualTo(409);
    assertThat(Json.parseObject(paused.body().getBytes()).get("detail"))
        .asString()
        .startsWith("sandbox sb-paused is paused; resume it");
    HttpResponse<String> starting = get("/sandboxes/sb-starting/port/8080/");
    assertThat(starting.statusCode()).isEqualTo(503);
    assertThat(starting.headers().firstValue("Retry-After")).contains("1");
    assertThat(get("/sandboxes/nope/agent/x").statusCode()).isEqualTo(404);
    assertThat(get("/sandboxes/sb-1/elsewhere").statusCode()).isEqualTo(404);
    assertThat(inspections).hasValue(0); // no backend call, let alone the frozen agent
    assertThat(get("/api/v1/anything").statusCode()).isEqualTo(418); // the API behind
  }

  @Test
  void portsNeedTheKeyOrAValidTokenForThatPort() throws Exception {
    int port = agent.getAddress().getPort();
    String path = "/sandboxes/sb-1/port/" + port + "/headers";
    assertThat(get(path).statusCode()).isEqualTo(401);
    assertThat(get(path, "X-Session-API-Key", "wrong").statusCode()).isEqualTo(401);
    assertThat(get(path, "X-Session-API-Key", KEY).statusCode()).isEqualTo(200);
    // The port's app never sees the sandbox key.
    assertThat(seenHeaders).doesNotContainKey("X-Session-API-Key");

    Gateway.SignedUrl signed = gateway.sign("http://x", "sb-1", port, Duration.ofMinutes(5));
    assertThat(get(path + "?paddock_token=" + signed.token()).statusCode()).isEqualTo(200);
    assertThat(get(path, "Cookie", "a=b; paddock_token=" + signed.token()).statusCode())
        .isEqualTo(200);
    Gateway.SignedUrl otherPort = gateway.sign("http://x", "sb-1", port + 1, Duration.ofMinutes(5));
    assertThat(get(path + "?paddock_token=" + otherPort.token()).statusCode()).isEqualTo(401);
    insert("sb-2", SandboxStatus.RUNNING);
    Gateway.SignedUrl otherSandbox = gateway.sign("http://x", "sb-2", port, Duration.ofMinutes(5));
    assertThat(get(path + "?paddock_token=" + otherSandbox.token()).statusCode()).isEqualTo(401);
  }

  @Test
  void aClosedPortIsA502ThatSaysSo() throws Exception {
    int closed;
    try (java.net.ServerSocket s = new java.net.ServerSocket(0)) {
      closed = s.getLocalPort();
    }
    listed.add(closed); // listed a moment ago, closed since
    HttpResponse<String> response =
        get("/sandboxes/sb-1/port/" + closed + "/", "X-Session-API-Key", KEY);
    assertThat(response.statusCode()).isEqualTo(502);
    assertThat(response.body()).contains("nothing listens on port " + closed);
  }

  @Test
  void aPortTheSandboxDoesNotListenOnIsRefusedWithoutTouchingIt() throws Exception {
    int port;
    try (java.net.ServerSocket other =
        new java.net.ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
      port = other.getLocalPort(); // someone else's service on the same loopback
      HttpResponse<String> response =
          get("/sandboxes/sb-1/port/" + port + "/", "X-Session-API-Key", KEY);

      assertThat(response.statusCode()).isEqualTo(403);
      assertThat(Json.parseAny(response.body().getBytes(StandardCharsets.UTF_8)))
          .isEqualTo(
              Map.of(
                  "detail",
                  "port "
                      + port
                      + " is not a port sandbox sb-1 listens on (see GET /api/v1/sandboxes/sb-1"
                      + "/ports)"));
    }
  }

  @Test
  void aListedPortIsKeptBrieflyAndANewOneIsFoundAtOnce() throws Exception {
    int port = agent.getAddress().getPort();
    String path = "/sandboxes/sb-1/port/" + port + "/who";
    assertThat(get(path, "X-Session-API-Key", KEY).statusCode()).isEqualTo(200);
    assertThat(get(path, "X-Session-API-Key", KEY).statusCode()).isEqualTo(200);
    assertThat(portListings).as("the second request used the kept list").hasValue(1);

    listed.clear(); // the server went away: a fresh list no longer has it
    Awaitility.await("the kept list expired")
        .atMost(Duration.ofSeconds(5))
        .until(() -> get(path, "X-Session-API-Key", KEY).statusCode() == 403);
    listed.add(port); // and it came back: found on the very next request, no waiting
    assertThat(get(path, "X-Session-API-Key", KEY).statusCode()).isEqualTo(200);
  }

  @Test
  void anAgentThatCannotListItsPortsIsA502() throws Exception {
    insert("sb-2", SandboxStatus.RUNNING); // the key source knows no key for sb-2
    int port = agent.getAddress().getPort();
    Gateway.SignedUrl signed = gateway.sign("http://x", "sb-2", port, Duration.ofMinutes(5));
    HttpResponse<String> response =
        get("/sandboxes/sb-2/port/" + port + "/who?paddock_token=" + signed.token());
    assertThat(response.statusCode()).isEqualTo(502);
    assertThat(response.body()).contains("cannot list the ports sandbox sb-2 listens on");
  }

  @Test
  void aPublicPortIsOpenToAnyoneUntilItsOwnerClosesItAgain() throws Exception {
    int port = agent.getAddress().getPort();
    String path = "/sandboxes/sb-1/port/" + port + "/who";
    assertThat(get(path).statusCode()).isEqualTo(401);

    assertThat(gateway.setPublic("sb-1", port, true)).containsExactly(port);
    assertThat(get(path).statusCode()).isEqualTo(200);
    assertThat(gateway.listening("http://x", "sb-1"))
        .singleElement()
        .satisfies(p -> assertThat(p.open()).isTrue());
    // Public opens that port only, and only of that sandbox.
    insert("sb-3", SandboxStatus.RUNNING);
    assertThat(get("/sandboxes/sb-3/port/" + port + "/who").statusCode()).isEqualTo(401);

    assertThat(gateway.setPublic("sb-1", port, false)).isEmpty();
    assertThat(get(path).statusCode()).isEqualTo(401);
  }

  @Test
  void aPublicPortStaysPublicAcrossAControlPlaneRestart() throws Exception {
    int port = agent.getAddress().getPort();
    gateway.setPublic("sb-1", port, true);
    stopFront();
    startFront(); // a new store connection, gateway and server on the same data dir

    assertThat(get("/sandboxes/sb-1/port/" + port + "/who").statusCode()).isEqualTo(200);
    assertThat(store.find("sb-1").orElseThrow().settings().publicPorts()).containsExactly(port);
  }

  @Test
  void makingAPortOfAMissingSandboxPublicIsA404() {
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> gateway.setPublic("nope", 80, true))
        .isInstanceOfSatisfying(
            dev.paddock.http.HttpError.class, e -> assertThat(e.status()).isEqualTo(404));
  }

  @Test
  void aPausedAutoResumeSandboxIsResumedByASignedUrlAndTheRequestForwarded() throws Exception {
    insert("sb-3", SandboxStatus.PAUSED, SandboxSettings.NONE.withAutoResume(true));
    int port = agent.getAddress().getPort();
    Gateway.SignedUrl signed = gateway.sign("http://x", "sb-3", port, Duration.ofMinutes(5));

    HttpResponse<String> response =
        get("/sandboxes/sb-3/port/" + port + "/who?paddock_token=" + signed.token());

    assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
    assertThat(resumes).hasValue(1);
    assertThat(store.find("sb-3").orElseThrow().status()).isEqualTo(SandboxStatus.RUNNING);
    assertThat(gateway.scrape())
        .contains("paddock_gateway_auto_resumes_total{route=\"/sandboxes/{id}/port/{port}/*\"} 1");
  }

  @Test
  void aPublicPortWakesAnAutoResumeSandbox() throws Exception {
    int port = agent.getAddress().getPort();
    insert(
        "sb-3",
        SandboxStatus.PAUSED,
        SandboxSettings.NONE.withAutoResume(true).withPublicPorts(java.util.Set.of(port)));

    assertThat(get("/sandboxes/sb-3/port/" + port + "/who").statusCode()).isEqualTo(200);
    assertThat(resumes).hasValue(1);
  }

  @Test
  void withoutAutoResumeAPausedSandboxIs409AtOnceEvenWithASignedUrl() throws Exception {
    insert("sb-3", SandboxStatus.PAUSED);
    int port = agent.getAddress().getPort();
    Gateway.SignedUrl signed = gateway.sign("http://x", "sb-3", port, Duration.ofMinutes(5));

    HttpResponse<String> response =
        get("/sandboxes/sb-3/port/" + port + "/who?paddock_token=" + signed.token());

    assertThat(response.statusCode()).isEqualTo(409);
    assertThat(response.body()).contains("sandbox sb-3 is paused; resume it");
    assertThat(resumes).hasValue(0);
  }

  @Test
  void nothingButASignedUrlOrAPublicPortWakesASandbox() throws Exception {
    insert("sb-3", SandboxStatus.PAUSED, SandboxSettings.NONE.withAutoResume(true));
    int port = agent.getAddress().getPort();
    Gateway.SignedUrl forged = gateway.sign("http://x", "sb-1", port, Duration.ofMinutes(5));

    assertThat(get("/sandboxes/sb-3/port/" + port + "/who").statusCode()).isEqualTo(409);
    assertThat(
            get("/sandboxes/sb-3/port/" + port + "/who?paddock_token=" + forged.token())
                .statusCode())
        .isEqualTo(409);
    // The session key was revoked by the pause, so it cannot vouch for a wake.
    assertThat(get("/sandboxes/sb-3/port/" + port + "/who", "X-Session-API-Key", KEY).statusCode())
        .isEqualTo(409);
    assertThat(get("/sandboxes/sb-3/agent/alive", "X-Session-API-Key", KEY).statusCode())
        .isEqualTo(409);
    assertThat(resumes).hasValue(0);
  }

  @Test
  void requestsArrivingDuringAWakeShareOneResume() throws Exception {
    insert("sb-3", SandboxStatus.PAUSED, SandboxSettings.NONE.withAutoResume(true));
    int port = agent.getAddress().getPort();
    Gateway.SignedUrl signed = gateway.sign("http://x", "sb-3", port, Duration.ofMinutes(5));
    CountDownLatch release = new CountDownLatch(1);
    resumeAction =
        id -> {
          try {
            release.await(20, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          markRunning(id);
        };
    List<CompletableFuture<HttpResponse<String>>> replies = new java.util.ArrayList<>();
    for (int i = 0; i < 5; i++) {
      replies.add(
          http.sendAsync(
              HttpRequest.newBuilder(
                      URI.create(
                          url(
                              "/sandboxes/sb-3/port/"
                                  + port
                                  + "/who?paddock_token="
                                  + signed.token())))
                  .build(),
              HttpResponse.BodyHandlers.ofString()));
    }
    Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> resumes.get() == 1);
    release.countDown();

    for (CompletableFuture<HttpResponse<String>> reply : replies) {
      assertThat(reply.get(20, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    }
    assertThat(resumes).hasValue(1);
  }

  @Test
  void aResumeThatFailsIsA502SayingWhy() throws Exception {
    HttpResponse<String> response =
        getWhileTheResumeFails(new IllegalStateException("at capacity: 10 sandboxes running"));

    assertThat(response.statusCode()).isEqualTo(502);
    assertThat(Json.parseObject(response.body().getBytes()).get("detail"))
        .isEqualTo("sandbox sb-3 could not be resumed: at capacity: 10 sandboxes running");
    assertThat(store.find("sb-3").orElseThrow().status()).isEqualTo(SandboxStatus.PAUSED);
  }

  @Test
  void aResumeThatTheStoreFailsNeverShowsTheStoresMessage() throws Exception {
    HttpResponse<String> response =
        getWhileTheResumeFails(
            new StoreException(
                "Store cannot update: Connection to db.internal.example:5432 refused"));

    assertThat(response.statusCode()).isEqualTo(502);
    assertThat(Json.parseObject(response.body().getBytes()).get("detail"))
        .isEqualTo(
            "sandbox sb-3 could not be resumed: the store is unavailable right now; try again");
    assertThat(response.body()).doesNotContain("db.internal.example").doesNotContain("5432");
  }

  /**
   * A signed request to the agent port of {@code sb-3}, paused with auto-resume on, whose resume
   * throws {@code failure}: the gateway's answer.
   */
  private HttpResponse<String> getWhileTheResumeFails(RuntimeException failure) throws Exception {
    insert("sb-3", SandboxStatus.PAUSED, SandboxSettings.NONE.withAutoResume(true));
    int port = agent.getAddress().getPort();
    Gateway.SignedUrl signed = gateway.sign("http://x", "sb-3", port, Duration.ofMinutes(5));
    resumeAction =
        id -> {
          throw failure;
        };
    return get("/sandboxes/sb-3/port/" + port + "/who?paddock_token=" + signed.token());
  }

  @Test
  void aBrowsersSocketKeyInTheQueryReachesTheAgentAsItsHeader() throws Exception {
    CompletableFuture<String> echoed = new CompletableFuture<>();
    String ws =
        url("/sandboxes/sb-1/agent/echo?session_api_key=" + KEY + "&x=1")
            .replaceFirst("^http", "ws");
    java.net.http.WebSocket socket =
        http.newWebSocketBuilder()
            .header("Origin", url(""))
            .buildAsync(
                URI.create(ws),
                new java.net.http.WebSocket.Listener() {
                  @Override
                  public CompletionStage<?> onText(
                      java.net.http.WebSocket s, CharSequence data, boolean last) {
                    echoed.complete(data.toString());
                    return null;
                  }
                })
            .get(10, TimeUnit.SECONDS);
    socket.sendText("hi", true).get(10, TimeUnit.SECONDS);
    assertThat(echoed.get(10, TimeUnit.SECONDS)).isEqualTo("echo:hi");
    // Moved into the one place every agent route reads it, and out of the URL it forwards.
    assertThat(seenHeaders)
        .containsEntry("socket key header", KEY)
        .containsEntry("socket key query", "none");
    socket.sendClose(java.net.http.WebSocket.NORMAL_CLOSURE, "bye").get(10, TimeUnit.SECONDS);
  }
}
