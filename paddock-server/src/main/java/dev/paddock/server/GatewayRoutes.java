package dev.paddock.server;

import dev.paddock.api.Caller;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxService;
import dev.paddock.http.Call;
import dev.paddock.http.HttpError;
import dev.paddock.http.JsonBody;
import dev.paddock.server.gateway.Gateway;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The REST side of the sandbox gateway: exposed URLs rewritten to go through it, and {@code POST
 * /api/v1/sandboxes/{id}/ports/{port}/url} minting signed, expiring URLs for one port. Without a
 * gateway ({@code PADDOCK_GATEWAY=off}) sandboxes show their direct URLs and the route is a 404.
 */
final class GatewayRoutes {
  private final Optional<Gateway> gateway;
  private final SandboxService sandboxes;
  private final Authenticator auth;
  private final boolean secure;

  GatewayRoutes(
      Optional<Gateway> gateway, SandboxService sandboxes, Authenticator auth, boolean secure) {
    this.gateway = gateway;
    this.sandboxes = sandboxes;
    this.auth = auth;
    this.secure = secure;
  }

  void register(dev.paddock.http.Router router) {
    router
        .add("POST", "/api/v1/sandboxes/{id}/ports/{port}/url", Failures.mapped(this::signUrl))
        .add("GET", "/api/v1/sandboxes/{id}/ports", Failures.mapped(this::ports))
        .add("PUT", "/api/v1/sandboxes/{id}/ports/{port}", Failures.mapped(this::setPublic));
  }

  /**
   * {@code info} as the caller of {@code call} should see it: through the gateway when it is on.
   */
  SandboxInfo view(Call call, SandboxInfo info) {
    return gateway.map(g -> g.exposedThrough(baseUrl(call), info)).orElse(info);
  }

  /** The control plane as this client reached it (its own Host header). */
  private String baseUrl(Call call) {
    String host = call.header("Host").filter(h -> !h.isBlank()).orElse("127.0.0.1");
    return (secure ? "https://" : "http://") + host;
  }

  /**
   * {@code GET /api/v1/sandboxes/{id}/ports}: the ports a process of the sandbox listens on, each
   * with its gateway URL ({@code url}, path mode) and, when a host domain is set, {@code host_url}.
   */
  private void ports(Call call) throws IOException {
    Gateway g = on();
    Caller caller = auth.require(call).caller();
    String id = call.pathParam("id");
    ownedSandbox(caller, id, "list its ports");
    List<Map<String, Object>> ports = new ArrayList<>();
    for (Gateway.ListedPort port : g.listening(baseUrl(call), id)) {
      Map<String, Object> item = new LinkedHashMap<>();
      item.put("port", port.port());
      item.put("address", port.address());
      item.put("url", port.url());
      port.hostUrl().ifPresent(u -> item.put("host_url", u));
      item.put("public", port.open());
      ports.add(item);
    }
    call.sendJson(200, Map.of("ports", ports));
  }

  private Gateway on() {
    return gateway.orElseThrow(
        () -> HttpError.notFound("the sandbox gateway is off (PADDOCK_GATEWAY=off)"));
  }

  /** The sandbox when the caller may see it and owns it (or is an admin); else 404 or 403. */
  private SandboxInfo ownedSandbox(Caller caller, String id, String what) {
    SandboxInfo info =
        sandboxes
            .get(caller, id)
            .orElseThrow(() -> HttpError.notFound("sandbox " + id + " not found"));
    if (caller.userId().isPresent() && !info.createdByUserId().equals(caller.userId())) {
      throw new HttpError(403, "only the owner of sandbox " + id + " may " + what);
    }
    return info;
  }

  /**
   * {@code {"expires_in": seconds}} optional; answers {@code url}, {@code token}, {@code
   * expires_at}.
   */
  private void signUrl(Call call) throws IOException {
    Gateway g = on();
    Caller caller = auth.require(call).caller();
    String id = call.pathParam("id");
    int port = port(call.pathParam("port"));
    Duration lifetime = lifetime(call);
    ownedSandbox(caller, id, "sign URLs for its ports");
    Gateway.SignedUrl signed = g.sign(baseUrl(call), id, port, lifetime);
    Map<String, Object> reply = new LinkedHashMap<>();
    reply.put("url", signed.url());
    reply.put("token", signed.token());
    reply.put("expires_at", signed.expiresAt().toString());
    call.sendJson(200, reply);
  }

  /**
   * {@code PUT /api/v1/sandboxes/{id}/ports/{port}} with {@code {"public": true|false}}: the owner
   * opens a port to anyone through the gateway, or closes it again. Answers the port and the
   * sandbox's public ports after the change. The port need not be listened on yet (a dev server
   * about to start).
   */
  private void setPublic(Call call) throws IOException {
    Gateway g = on();
    Caller caller = auth.require(call).caller();
    String id = call.pathParam("id");
    int port = port(call.pathParam("port"));
    JsonBody body = JsonBody.parse(call.smallBody(), Set.of("public"));
    boolean open =
        body.optionalBoolean("public")
            .orElseThrow(() -> HttpError.unprocessable("\"public\" (true or false) is required"));
    ownedSandbox(caller, id, "change who may reach its ports");
    Set<Integer> now = g.setPublic(id, port, open);
    Map<String, Object> reply = new LinkedHashMap<>();
    reply.put("port", port);
    reply.put("public", now.contains(port));
    reply.put("public_ports", now);
    call.sendJson(200, reply);
  }

  private static int port(String text) {
    try {
      int port = Integer.parseInt(text);
      if (port >= 1 && port <= 65535) {
        return port;
      }
    } catch (NumberFormatException e) {
      // Answered below.
    }
    throw HttpError.unprocessable("port must be a number from 1 to 65535, got '" + text + "'");
  }

  private static Duration lifetime(Call call) throws IOException {
    if (call.contentLength() == 0) {
      return Duration.ZERO;
    }
    byte[] raw = call.smallBody();
    if (raw.length == 0) {
      return Duration.ZERO;
    }
    JsonBody body = JsonBody.parse(raw, Set.of("expires_in"));
    return body.optionalLong("expires_in", 1, Long.MAX_VALUE)
        .map(Duration::ofSeconds)
        .orElse(Duration.ZERO);
  }
}
