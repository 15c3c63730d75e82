package dev.paddock.server;

import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxService;
import dev.paddock.http.Call;
import dev.paddock.http.HttpError;
import dev.paddock.http.Json;
import dev.paddock.http.Router;
import dev.paddock.store.AppendedEvents;
import dev.paddock.store.ConversationRefusedException;
import dev.paddock.store.SandboxStore;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What sandboxes post back, authenticated by their session key (valid only while RUNNING): events
 * and conversation documents, stored. Unlike OpenHands, a failure to store is answered as a failure
 * (503), so the agent retries instead of losing events.
 *
 * <p>Tenancy: a conversation belongs to the sandbox that first posted to it (see {@link
 * SandboxStore#appendEvents}); another sandbox's writes are 404 and change nothing. Quotas: a
 * request over {@link ApiServerConfig#webhookMaxRequestBytes()} is 413, a conversation past its
 * quota drops its oldest events, a sandbox past its conversation quota gets 429.
 */
final class WebhookRoutes {
  static final String SESSION_KEY_HEADER = "X-Session-API-Key";

  private final SandboxService sandboxes;
  private final SandboxStore store;
  private final ApiServerConfig config;

  WebhookRoutes(SandboxService sandboxes, SandboxStore store, ApiServerConfig config) {
    this.sandboxes = sandboxes;
    this.store = store;
    this.config = config;
  }

  void register(Router router) {
    router
        .add("POST", "/api/v1/webhooks/events/{conversation_id}", refused(this::events))
        .add("POST", "/api/v1/webhooks/conversations", refused(this::conversation))
        .add("GET", "/api/v1/session/validate", Failures.mapped(this::validate));
  }

  /** The store's refusals as HTTP: another sandbox's conversation 404, over quota 429. */
  private static Router.Route refused(Router.Route route) {
    Router.Route mapped = Failures.mapped(route);
    return call -> {
      try {
        mapped.handle(call);
      } catch (ConversationRefusedException e) {
        throw switch (e.reason()) {
          case NOT_THIS_SANDBOX -> HttpError.notFound(e.getMessage());
          case TOO_MANY_CONVERSATIONS -> new HttpError(429, e.getMessage());
        };
      }
    };
  }

  /** The body, refused (413) beyond the webhook request limit, however it is sent. */
  private byte[] body(Call call) throws IOException {
    long limit = config.webhookMaxRequestBytes();
    if (call.contentLength() > limit) {
      throw tooLarge(limit);
    }
    try (InputStream in = call.body()) {
      byte[] body = in.readNBytes((int) Math.min(limit + 1, Integer.MAX_VALUE - 8));
      if (body.length > limit) {
        throw tooLarge(limit);
      }
      return body;
    }
  }

  private static HttpError tooLarge(long limit) {
    return new HttpError(
        413,
        "webhook request body is larger than the limit of "
            + limit
            + " bytes (PADDOCK_WEBHOOK_MAX_REQUEST_BYTES); post fewer events per request");
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
    Object body = Json.parseAny(body(call));
    if (!(body instanceof List<?> list)) {
      throw HttpError.unprocessable("body must be a JSON array of events");
    }
    List<String> events = new ArrayList<>(list.size());
    for (Object event : list) {
      if (!(event instanceof Map<?, ?>)) {
        throw HttpError.unprocessable("every event must be a JSON object");
      }
      String json = Json.string(event);
      if (json.getBytes(StandardCharsets.UTF_8).length
          > config.webhookQuota().maxBytesPerConversation()) {
        throw new HttpError(
            413,
            "an event is larger than a conversation may hold (PADDOCK_WEBHOOK_MAX_BYTES = "
                + config.webhookQuota().maxBytesPerConversation()
                + " bytes)");
      }
      events.add(json);
    }
    AppendedEvents appended =
        store.appendEvents(
            sandbox.id(), call.pathParam("conversation_id"), events, config.webhookQuota());
    call.sendJson(
        200, Map.of("success", true, "stored", events.size(), "dropped", appended.dropped()));
  }

  private void conversation(Call call) throws IOException {
    SandboxInfo sandbox = sandbox(call);
    Map<String, Object> body = Json.parseObject(body(call));
    if (!(body.get("id") instanceof String id) || id.isBlank()) {
      throw HttpError.unprocessable("field 'id' (the conversation id) is required");
    }
    store.upsertConversation(id, sandbox.id(), Json.string(body), config.webhookQuota());
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
