package dev.paddock.server;

import dev.paddock.api.PageRequest;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxService;
import dev.paddock.http.Call;
import dev.paddock.http.HttpError;
import dev.paddock.http.Router;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/** {@code /api/v1/sandboxes}: OpenHands' paths and shapes, plus create-and-wait. */
final class SandboxRoutes {
  private static final Duration MAX_WAIT = Duration.ofMinutes(10);

  private final SandboxService sandboxes;
  private final Authenticator auth;
  private final SessionKeyCache keys;

  SandboxRoutes(SandboxService sandboxes, Authenticator auth, SessionKeyCache keys) {
    this.sandboxes = sandboxes;
    this.auth = auth;
    this.keys = keys;
  }

  void register(Router router) {
    router
        .add("GET", "/api/v1/sandboxes/search", Failures.mapped(this::search))
        .add("GET", "/api/v1/sandboxes", Failures.mapped(this::batchGet))
        .add("POST", "/api/v1/sandboxes", Failures.mapped(this::create))
        .add("GET", "/api/v1/sandboxes/{id}", Failures.mapped(this::getOne))
        .add("POST", "/api/v1/sandboxes/{id}/pause", Failures.mapped(this::pause))
        .add("POST", "/api/v1/sandboxes/{id}/resume", Failures.mapped(this::resume))
        .add("DELETE", "/api/v1/sandboxes/{id}", Failures.mapped(this::delete));
  }

  private void search(Call call) throws IOException {
    call.allowQuery(Set.of("page_id", "limit"));
    var caller = auth.require(call).caller();
    int limit = call.queryInt("limit", 1, PageRequest.MAX_LIMIT).orElse(PageRequest.MAX_LIMIT);
    var page = sandboxes.search(caller, new PageRequest(call.query("page_id"), limit));
    call.sendJson(200, Views.page(page, info -> Views.sandbox(keys.fill(info))));
  }

  private void batchGet(Call call) throws IOException {
    call.allowQuery(Set.of("id"));
    var caller = auth.require(call).caller();
    List<String> ids = call.queryAll("id");
    if (ids.size() > 100) {
      throw HttpError.badRequest("at most 100 ids per request, got " + ids.size());
    }
    List<Object> items = new ArrayList<>();
    for (Optional<SandboxInfo> info : sandboxes.batchGet(caller, ids)) {
      items.add(info.map(i -> (Object) Views.sandbox(keys.fill(i))).orElse(null));
    }
    call.sendJson(200, items);
  }

  private void getOne(Call call) throws IOException {
    var caller = auth.require(call).caller();
    String id = call.pathParam("id");
    SandboxInfo info =
        sandboxes.get(caller, id).orElseThrow(() -> HttpError.notFound("no sandbox " + id));
    call.sendJson(200, Views.sandbox(keys.fill(info)));
  }

  /**
   * {@code POST /api/v1/sandboxes[?sandbox_spec_id=][&sandbox_id=][&wait=true][&timeout=S]}: with
   * {@code wait} the reply comes once the sandbox is RUNNING and its agent answers (Paddock).
   */
  private void create(Call call) throws IOException {
    call.allowQuery(Set.of("sandbox_spec_id", "sandbox_id", "wait", "timeout"));
    var caller = auth.require(call).caller();
    boolean wait = call.queryBoolean("wait").orElse(false);
    Duration timeout =
        Duration.ofSeconds(call.queryInt("timeout", 1, (int) MAX_WAIT.toSeconds()).orElse(120));
    SandboxInfo started =
        keys.remember(
            sandboxes.start(caller, call.query("sandbox_spec_id"), call.query("sandbox_id")));
    if (wait) {
      SandboxInfo running = sandboxes.waitUntilRunning(caller, started.id(), timeout);
      call.sendJson(200, Views.sandbox(keys.fill(running)));
      return;
    }
    call.sendJson(200, Views.sandbox(started));
  }

  private void pause(Call call) throws IOException {
    var caller = auth.require(call).caller();
    String id = call.pathParam("id");
    if (!sandboxes.pause(caller, id)) {
      throw HttpError.notFound("no sandbox " + id);
    }
    keys.forget(id);
    call.sendJson(200, Map.of("success", true));
  }

  private void resume(Call call) throws IOException {
    var caller = auth.require(call).caller();
    String id = call.pathParam("id");
    SandboxInfo resumed =
        sandboxes.resume(caller, id).orElseThrow(() -> HttpError.notFound("no sandbox " + id));
    keys.remember(resumed);
    call.sendJson(200, Map.of("success", true, "sandbox", Views.sandbox(resumed)));
  }

  /** OpenHands clients also send {@code ?sandbox_id=<id>}; it must match the path when present. */
  private void delete(Call call) throws IOException {
    call.allowQuery(Set.of("sandbox_id"));
    var caller = auth.require(call).caller();
    String id = call.pathParam("id");
    Optional<String> echoed = call.query("sandbox_id");
    if (echoed.isPresent() && !echoed.get().equals(id)) {
      throw HttpError.badRequest(
          "sandbox_id '" + echoed.get() + "' does not match the path '" + id + "'");
    }
    keys.forget(id);
    if (!sandboxes.delete(caller, id)) {
      throw HttpError.notFound("no sandbox " + id);
    }
    call.sendJson(200, Map.of("success", true));
  }
}
