package dev.paddock.server;

import dev.paddock.api.Caller;
import dev.paddock.api.PageRequest;
import dev.paddock.api.SandboxFilter;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxService;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.StartRequest;
import dev.paddock.http.Call;
import dev.paddock.http.HttpError;
import dev.paddock.http.Router;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * {@code /api/v1/sandboxes}: OpenHands' paths and shapes, plus create-and-wait, create with a body,
 * filtered search, labels and keepalive. A RUNNING sandbox's session key is shown to its owner only
 * (derived again by the service, so it survives restarts), never to an admin looking at another
 * user's sandbox.
 */
final class SandboxRoutes {
  private static final Duration MAX_WAIT = Duration.ofMinutes(10);

  private final SandboxService sandboxes;
  private final Authenticator auth;
  private final GatewayRoutes gateway;

  SandboxRoutes(SandboxService sandboxes, Authenticator auth, GatewayRoutes gateway) {
    this.sandboxes = sandboxes;
    this.auth = auth;
    this.gateway = gateway;
  }

  /** The reply shape of one sandbox, its URLs through the gateway when it is on. */
  private Map<String, Object> view(Call call, SandboxInfo info) {
    return Views.sandbox(gateway.view(call, info));
  }

  void register(Router router) {
    router
        .add("GET", "/api/v1/sandboxes/search", Failures.mapped(this::search))
        .add("GET", "/api/v1/sandboxes", Failures.mapped(this::batchGet))
        .add("POST", "/api/v1/sandboxes", Failures.mapped(this::create))
        .add("GET", "/api/v1/sandboxes/{id}", Failures.mapped(this::getOne))
        .add("PATCH", "/api/v1/sandboxes/{id}", Failures.mapped(this::patch))
        .add("POST", "/api/v1/sandboxes/{id}/keepalive", Failures.mapped(this::keepAlive))
        .add("POST", "/api/v1/sandboxes/{id}/pause", Failures.mapped(this::pause))
        .add("POST", "/api/v1/sandboxes/{id}/resume", Failures.mapped(this::resume))
        .add("DELETE", "/api/v1/sandboxes/{id}", Failures.mapped(this::delete));
  }

  /**
   * {@code GET /api/v1/sandboxes/search[?page_id=][&limit=][&status=S][&label=k=v]...
   * [&sandbox_spec_id=]}: {@code status} and {@code label} may repeat; every label must match.
   */
  private void search(Call call) throws IOException {
    call.allowQuery(Set.of("page_id", "limit", "status", "label", "sandbox_spec_id"));
    Caller caller = auth.require(call).caller();
    int limit = call.queryInt("limit", 1, PageRequest.MAX_LIMIT).orElse(PageRequest.MAX_LIMIT);
    var page =
        sandboxes.search(caller, filter(call), new PageRequest(call.query("page_id"), limit));
    call.sendJson(200, Views.page(page, info -> view(call, withKey(caller, info))));
  }

  private static SandboxFilter filter(Call call) {
    Set<SandboxStatus> statuses = EnumSet.noneOf(SandboxStatus.class);
    for (String value : call.queryAll("status")) {
      Arrays.stream(value.split(","))
          .map(String::strip)
          .map(SandboxRoutes::status)
          .forEach(statuses::add);
    }
    Map<String, String> labels = new LinkedHashMap<>();
    for (String selector : call.queryAll("label")) {
      int eq = selector.indexOf('=');
      if (eq <= 0) {
        throw HttpError.badRequest(
            "label selector '" + selector + "' must be key=value (repeat label= for more)");
      }
      String key = selector.substring(0, eq);
      String value = selector.substring(eq + 1);
      String before = labels.putIfAbsent(key, value);
      if (before != null && !before.equals(value)) {
        throw HttpError.badRequest(
            "label selectors " + key + "=" + before + " and " + selector + " can never both hold");
      }
    }
    return new SandboxFilter(statuses, labels, call.query("sandbox_spec_id"));
  }

  private static SandboxStatus status(String name) {
    try {
      return SandboxStatus.valueOf(name.toUpperCase(java.util.Locale.ROOT));
    } catch (IllegalArgumentException e) {
      throw HttpError.badRequest(
          "unknown status '" + name + "'; allowed: " + Arrays.toString(SandboxStatus.values()));
    }
  }

  private void batchGet(Call call) throws IOException {
    call.allowQuery(Set.of("id"));
    Caller caller = auth.require(call).caller();
    List<String> ids = call.queryAll("id");
    if (ids.size() > 100) {
      throw HttpError.badRequest("at most 100 ids per request, got " + ids.size());
    }
    List<Object> items = new ArrayList<>();
    for (Optional<SandboxInfo> info : sandboxes.batchGet(caller, ids)) {
      items.add(info.map(i -> (Object) view(call, withKey(caller, i))).orElse(null));
    }
    call.sendJson(200, items);
  }

  private void getOne(Call call) throws IOException {
    Caller caller = auth.require(call).caller();
    String id = call.pathParam("id");
    SandboxInfo info = sandboxes.get(caller, id).orElseThrow(() -> notFound(id));
    call.sendJson(200, view(call, withKey(caller, info)));
  }

  /** The info with its current key when RUNNING and the caller owns it; otherwise none. */
  private SandboxInfo withKey(Caller caller, SandboxInfo info) {
    if (info.status() != SandboxStatus.RUNNING) {
      return info.withoutKey();
    }
    return info.withKey(sandboxes.sessionKey(caller, info.id()));
  }

  /**
   * {@code POST /api/v1/sandboxes[?sandbox_spec_id=][&sandbox_id=][&wait=true][&timeout=S]} with an
   * optional JSON body (see docs/API.md): with {@code wait} the reply comes once the sandbox is
   * RUNNING and its agent answers (Paddock). The query's {@code timeout} bounds that wait; the
   * body's {@code timeout} is the sandbox's lifetime.
   */
  private void create(Call call) throws IOException {
    call.allowQuery(Set.of("sandbox_spec_id", "sandbox_id", "wait", "timeout", "queue_timeout"));
    Caller caller = auth.require(call).caller();
    boolean wait = call.queryBoolean("wait").orElse(false);
    Duration timeout =
        Duration.ofSeconds(call.queryInt("timeout", 1, (int) MAX_WAIT.toSeconds()).orElse(120));
    StartRequest request =
        SandboxBodies.parse(call.smallBody(), SandboxBodies.CREATE_FIELDS)
            .startRequest(call.query("sandbox_spec_id"), call.query("sandbox_id"));
    Optional<Duration> queueTimeout = queueTimeout(call);
    if (queueTimeout.isPresent()) {
      request = request.withQueueTimeout(queueTimeout.get());
    }
    SandboxInfo started = sandboxes.start(caller, request);
    if (wait) {
      SandboxInfo running = sandboxes.waitUntilRunning(caller, started.id(), timeout);
      call.sendJson(200, view(call, withKey(caller, running)));
      return;
    }
    call.sendJson(200, view(call, started));
  }

  /**
   * {@code queue_timeout=S}: whole seconds, at least 1; the service checks the operator's maximum.
   * Any other value is a 400 naming it.
   */
  private static Optional<Duration> queueTimeout(Call call) {
    Optional<String> raw = call.query("queue_timeout");
    if (raw.isEmpty()) {
      return Optional.empty();
    }
    long seconds;
    try {
      seconds = Long.parseLong(raw.get().strip());
    } catch (NumberFormatException e) {
      throw HttpError.badRequest(
          "queue_timeout must be a whole number of seconds, got '" + raw.get() + "'");
    }
    if (seconds < 1) {
      throw HttpError.badRequest("queue_timeout must be at least 1 second, got " + seconds);
    }
    return Optional.of(Duration.ofSeconds(seconds));
  }

  /** {@code PATCH /api/v1/sandboxes/{id}} with {@code {"labels": {...}}}: replaces the labels. */
  private void patch(Call call) throws IOException {
    Caller caller = auth.require(call).caller();
    String id = call.pathParam("id");
    SandboxBodies body = SandboxBodies.parse(call.smallBody(), Set.of("labels"));
    Map<String, String> labels =
        body.stringMap("labels")
            .orElseThrow(() -> HttpError.unprocessable("field 'labels' is required"));
    SandboxInfo info = sandboxes.setLabels(caller, id, labels).orElseThrow(() -> notFound(id));
    call.sendJson(200, view(call, withKey(caller, info)));
  }

  /** {@code POST /api/v1/sandboxes/{id}/keepalive} with optional {@code {"timeout": seconds}}. */
  private void keepAlive(Call call) throws IOException {
    Caller caller = auth.require(call).caller();
    String id = call.pathParam("id");
    Optional<Duration> timeout =
        SandboxBodies.parse(call.smallBody(), Set.of("timeout")).seconds("timeout");
    Optional<SandboxInfo> kept =
        timeout.isPresent()
            ? sandboxes.keepAlive(caller, id, timeout.get())
            : sandboxes.keepAlive(caller, id);
    call.sendJson(200, view(call, withKey(caller, kept.orElseThrow(() -> notFound(id)))));
  }

  private void pause(Call call) throws IOException {
    Caller caller = auth.require(call).caller();
    String id = call.pathParam("id");
    if (!sandboxes.pause(caller, id)) {
      throw notFound(id);
    }
    call.sendJson(200, Map.of("success", true));
  }

  private void resume(Call call) throws IOException {
    Caller caller = auth.require(call).caller();
    String id = call.pathParam("id");
    SandboxInfo resumed = sandboxes.resume(caller, id).orElseThrow(() -> notFound(id));
    call.sendJson(200, Map.of("success", true, "sandbox", view(call, resumed)));
  }

  /**
   * OpenHands clients also send {@code ?sandbox_id=<id>}; it must match the path when present. The
   * ownership check comes first: a non-owner's delete changes nothing.
   */
  private void delete(Call call) throws IOException {
    call.allowQuery(Set.of("sandbox_id"));
    Caller caller = auth.require(call).caller();
    String id = call.pathParam("id");
    Optional<String> echoed = call.query("sandbox_id");
    if (echoed.isPresent() && !echoed.get().equals(id)) {
      throw HttpError.badRequest(
          "sandbox_id '" + echoed.get() + "' does not match the path '" + id + "'");
    }
    if (!sandboxes.delete(caller, id)) {
      throw notFound(id);
    }
    call.sendJson(200, Map.of("success", true));
  }

  private static HttpError notFound(String id) {
    return HttpError.notFound("no sandbox " + id);
  }
}
