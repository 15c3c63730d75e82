package dev.paddock.runtimeapi;

import com.sun.net.httpserver.HttpServer;
import dev.paddock.api.KeyDigest;
import dev.paddock.api.SandboxSpecService;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.http.Call;
import dev.paddock.http.HttpError;
import dev.paddock.http.HttpServerConfig;
import dev.paddock.http.HttpServers;
import dev.paddock.http.Json;
import dev.paddock.http.JsonBody;
import dev.paddock.http.Router;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The runtime API's HTTP side: every route behind {@code X-API-Key} (compared in constant time
 * against its digest), each error a {@code {"detail"}} 4xx (or a 503 when the backend failed and a
 * retry may work).
 */
final class RuntimeApiServer implements RuntimeApi {
  static final String API_KEY_HEADER = "X-API-Key";
  private static final Logger LOG = LoggerFactory.getLogger(RuntimeApiServer.class);
  private static final int MAX_BATCH = 1000;

  private final HttpServer http;
  private final RuntimeSessions sessions;

  private RuntimeApiServer(HttpServer http, RuntimeSessions sessions) {
    this.http = http;
    this.sessions = sessions;
  }

  static RuntimeApi start(
      RuntimeApiConfig config, SandboxBackend backend, SandboxSpecService specs) {
    RuntimeSessions sessions =
        new RuntimeSessions(
            backend,
            specs,
            new SessionTable(config.maxSandboxes()),
            new SessionFile(config.dataDir()),
            new RuntimeKeys(config.secret()),
            Clock.systemUTC());
    int restored;
    try {
      restored = sessions.restore();
    } catch (RuntimeException e) {
      sessions.close();
      throw e;
    }
    if (restored > 0) {
      LOG.info("restored {} sessions from {}", restored, config.dataDir());
    }
    HttpServer http;
    try {
      http =
          HttpServers.create(
              HttpServerConfig.builder(new InetSocketAddress(config.host(), config.port()))
                  .backlog(256)
                  .build());
    } catch (IOException e) {
      sessions.close();
      throw new UncheckedIOException(
          "cannot listen on " + config.host() + ":" + config.port() + ": " + e.getMessage(), e);
    }
    http.createContext("/", routes(sessions, KeyDigest.sha256Hex(config.apiKey())));
    http.start();
    return new RuntimeApiServer(http, sessions);
  }

  private static Router routes(RuntimeSessions sessions, String keyDigest) {
    Router router =
        Router.builder()
            .protect(
                List.of("/"),
                call ->
                    call.header(API_KEY_HEADER)
                        .filter(k -> KeyDigest.matches(k, keyDigest))
                        .isPresent(),
                "send the runtime API's key in the X-API-Key header")
            .build();
    return router
        .add("POST", "/start", call -> start(call, sessions))
        .add("GET", "/sessions/batch", call -> batch(call, sessions))
        .add(
            "GET",
            "/sessions/{id}",
            call -> reply(call, sessions, sessions.get(call.pathParam("id"))))
        .add("GET", "/list", call -> list(call, sessions))
        .add("POST", "/pause", call -> reply(call, sessions, sessions.pause(runtimeId(call))))
        .add("POST", "/resume", call -> reply(call, sessions, sessions.resume(runtimeId(call))))
        .add("POST", "/stop", call -> stop(call, sessions))
        .add("GET", "/api/warm-runtime-configs", call -> warmConfigs(call, sessions))
        .add("GET", "/paddock/capacity", call -> call.sendJson(200, sessions.capacity()));
  }

  private static void start(Call call, RuntimeSessions sessions) throws IOException {
    byte[] bytes = call.smallBody();
    Map<String, Object> raw = Json.parseObject(bytes);
    StartBody body =
        StartBody.parse(
            JsonBody.parse(bytes, StartBody.fields()),
            raw.get("command"),
            raw.get("paddock_resources"));
    reply(call, sessions, sessions.start(body));
  }

  private static void batch(Call call, RuntimeSessions sessions) throws IOException {
    call.allowQuery(Set.of("ids"));
    List<String> ids = call.queryAll("ids");
    if (ids.size() > MAX_BATCH) {
      throw HttpError.unprocessable("at most " + MAX_BATCH + " ids per batch, got " + ids.size());
    }
    List<Object> runtimes = new ArrayList<>(ids.size());
    for (String id : ids) {
      Optional<RuntimeSessions.Live> live = sessions.find(id);
      runtimes.add(live.map(l -> RuntimeWire.runtime(l, sessions.sessionKey(l))).orElse(null));
    }
    call.sendJson(200, runtimes);
  }

  private static void list(Call call, RuntimeSessions sessions) throws IOException {
    List<Object> runtimes =
        sessions.all().stream()
            .map(l -> (Object) RuntimeWire.runtime(l, sessions.sessionKey(l)))
            .toList();
    call.sendJson(200, Map.of("runtimes", runtimes));
  }

  private static void stop(Call call, RuntimeSessions sessions) throws IOException {
    String runtimeId = runtimeId(call);
    sessions.stop(runtimeId);
    call.sendJson(200, Map.of("runtime_id", runtimeId, "status", "stopped"));
  }

  private static void warmConfigs(Call call, RuntimeSessions sessions) throws IOException {
    List<Object> configs =
        sessions.allSpecs().stream().map(s -> (Object) RuntimeWire.warmConfig(s)).toList();
    call.sendJson(200, Map.of("configs", configs));
  }

  private static String runtimeId(Call call) throws IOException {
    return call.jsonBody(Set.of("runtime_id")).requiredString("runtime_id");
  }

  private static void reply(Call call, RuntimeSessions sessions, RuntimeSessions.Live live)
      throws IOException {
    call.sendJson(200, RuntimeWire.runtime(live, sessions.sessionKey(live)));
  }

  @Override
  public int port() {
    return http.getAddress().getPort();
  }

  @Override
  public void close() {
    http.stop(0);
    sessions.close();
  }
}
