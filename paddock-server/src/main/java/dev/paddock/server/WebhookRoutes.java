package dev.paddock.server;

import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxService;
import dev.paddock.http.Call;
import dev.paddock.http.HttpError;
import dev.paddock.http.Json;
import dev.paddock.http.Router;
import dev.paddock.store.SandboxStore;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What sandboxes post back, authenticated by their session key (valid only while RUNNING): events
 * and conversation documents, stored. Unlike OpenHands, a failure to store is answered as a failure
 * (503), so the agent retries instead of losing events.
 */
final class WebhookRoutes {
  static final String SESSION_KEY_HEADER = "X-Session-API-Key";

  private final SandboxService sandboxes;
  private final SandboxStore store;

  WebhookRoutes(SandboxService sandboxes, SandboxStore store) {
    this.sandboxes = sandboxes;
    this.store = store;
  }

  void register(Router router) {
    router
        .add("POST", "/api/v1/webhooks/events/{conversation_id}", Failures.mapped(this::events))
        .add("POST", "/api/v1/webhooks/conversations", Failures.mapped(this::conversation))
        .add("GET", "/api/v1/session/validate", Failures.mapped(this::validate));
  }

  private SandboxInfo sandbox(Call call) {
    String key = call.header(SESSION_KEY_HEADER).orElse("");
    if (key.isEmpty()) {
      throw new HttpError(401, SESSION_KEY_HEADER + " header is required");
    }
    return sandboxes
        .getBySessionKey(key)
        .orElseThrow(
            () -> new HttpError(401, "invalid session key, or the sandbox is not running"));
  }

  private void events(Call call) throws IOException {
    SandboxInfo sandbox = sandbox(call);
    Object body = Json.parseAny(call.smallBody());
    if (!(body instanceof List<?> list)) {
      throw HttpError.unprocessable("body must be a JSON array of events");
    }
    List<String> events = new ArrayList<>(list.size());
    for (Object event : list) {
      if (!(event instanceof Map<?, ?>)) {
        throw HttpError.unprocessable("every event must be a JSON object");
      }
      events.add(Json.string(event));
    }
    store.appendEvents(sandbox.id(), call.pathParam("conversation_id"), events);
    call.sendJson(200, Map.of("success", true, "stored", events.size()));
  }

  private void conversation(Call call) throws IOException {
    SandboxInfo sandbox = sandbox(call);
    Map<String, Object> body = Json.parseObject(call.smallBody());
    if (!(body.get("id") instanceof String id) || id.isBlank()) {
      throw HttpError.unprocessable("field 'id' (the conversation id) is required");
    }
    store.upsertConversation(id, sandbox.id(), Json.string(body));
    call.sendJson(200, Map.of("success", true));
  }

  /** Lets a sandbox prove who it is: 200 with its id and owner while RUNNING, else 401. */
  private void validate(Call call) throws IOException {
    SandboxInfo sandbox = sandbox(call);
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("sandbox_id", sandbox.id());
    m.put("created_by_user_id", sandbox.createdByUserId().orElse(null));
    m.put("status", sandbox.status().name());
    call.sendJson(200, m);
  }
}
