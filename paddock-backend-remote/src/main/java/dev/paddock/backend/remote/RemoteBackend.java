package dev.paddock.backend.remote;

import dev.paddock.api.Resources;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.ListedRuntime;
import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeRequest;
import dev.paddock.api.spi.RuntimeStartException;
import dev.paddock.api.spi.RuntimeState;
import dev.paddock.api.spi.SandboxAgent;
import dev.paddock.api.spi.SandboxBackend;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Sandboxes on runtime APIs. Start asks each host for its free capacity, places the sandbox (see
 * {@link Placement}) and sends {@code POST /start} with the control plane's key digests, so the
 * agent accepts exactly the control plane's keys and the runtime API never knows one; the handle
 * names the host and the runtime id, so the sandbox stays there. Inspect is {@code GET
 * /sessions/{id}}, list one {@code GET /list} per host (only sessions carrying this control plane's
 * tag). Thread-safe.
 */
final class RemoteBackend implements SandboxBackend {
  static final String NAME = "remote";
  static final String HOST = "host";
  static final String RUNTIME_ID = "runtime_id";

  private static final java.util.Set<String> STARTED = java.util.Set.of("running", "starting");

  private static final System.Logger LOG = System.getLogger("paddock.backend.remote");

  private final RemoteSettings settings;
  private final RuntimeApiClient client;
  private final Placement placement = new Placement();

  RemoteBackend(RemoteSettings settings) {
    this.settings = settings;
    this.client = new RuntimeApiClient(settings.timeout());
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public RuntimeHandle start(RuntimeRequest request) {
    List<RemoteHost> order = placement.choose(offers());
    if (order.isEmpty()) {
      throw RuntimeStartException.of(
          RuntimeFailure.Kind.CAPACITY, "no runtime API reports free capacity", null);
    }
    RemoteHost host = order.get(0);
    try {
      for (int i = 0; ; i++) {
        host = order.get(i);
        RuntimeApiClient.Reply reply = startOn(host, request);
        if (reply.status() != 429 || i == order.size() - 1) {
          return started(host, request, reply);
        }
        placement.move(host, order.get(i + 1)); // nothing happened there: the next host may
      }
    } finally {
      placement.release(host);
    }
  }

  private RuntimeApiClient.Reply startOn(RemoteHost host, RuntimeRequest request) {
    try {
      return client.post(host, "/start", startBody(request), settings.startTimeout());
    } catch (RuntimeApiClient.UnreachableException e) {
      // The start may have happened before the reply was lost: find it (a GET) and stop that one
      // runtime, rather than repeat the start or leave it running with no record to find it.
      stopIfStarted(host, request.sandboxId());
      throw RuntimeStartException.of(RuntimeFailure.Kind.ENGINE_UNREACHABLE, e.getMessage(), e);
    }
  }

  private RuntimeHandle started(RemoteHost host, RuntimeRequest request, RuntimeApiClient.Reply r) {
    String id = request.sandboxId();
    if (r.status() == 429) {
      throw RuntimeStartException.of(
          RuntimeFailure.Kind.CAPACITY, "every runtime API is full: " + r.detail(), null);
    }
    if (!r.ok()) {
      throw RuntimeStartException.of(
          RuntimeFailure.Kind.UNKNOWN,
          "runtime API " + host + " refused the start: " + r.detail(),
          null);
    }
    RuntimeHandle handle = handle(host, r.object());
    // The local backend's start returned (its agent answered once); "starting" only means a probe
    // right after it was slow, as on a loaded host: the control plane's wait sees it come up.
    if (!STARTED.contains(r.string("status").orElse(""))) {
      RuntimeFailure failure = failure(host, r.object());
      stopQuietly(handle);
      throw new RuntimeStartException(failure);
    }
    LOG.log(System.Logger.Level.DEBUG, "sandbox {0} runs on {1}", id, host);
    return handle;
  }

  private Map<String, Object> startBody(RuntimeRequest request) {
    SandboxSpec spec = request.spec();
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("image", spec.imageReference());
    body.put("session_id", request.sandboxId());
    body.put("environment", request.env());
    body.put("paddock_session_key_sha256", request.sessionKeyDigests());
    if (!request.adminKeyDigest().isEmpty()) {
      body.put("paddock_admin_key_sha256", request.adminKeyDigest());
    }
    body.put("paddock_client", settings.client());
    if (!spec.command().isEmpty()) {
      body.put("paddock_command", spec.command());
    }
    body.put("paddock_working_dir", spec.workingDir());
    resources(spec.resources()).ifPresent(r -> body.put("paddock_resources", r));
    return body;
  }

  private static Optional<Map<String, Object>> resources(Resources limits) {
    Map<String, Object> json = new LinkedHashMap<>();
    limits.cpus().ifPresent(v -> json.put("cpus", v));
    limits.memoryBytes().ifPresent(v -> json.put("memory", v));
    limits.pids().ifPresent(v -> json.put("pids", v));
    limits.diskBytes().ifPresent(v -> json.put("disk", v));
    return json.isEmpty() ? Optional.empty() : Optional.of(json);
  }

  /** Each reachable host's free capacity ({@code GET /paddock/capacity}). */
  private List<Placement.Offer> offers() {
    List<Placement.Offer> offers = new ArrayList<>();
    for (RemoteHost host : settings.hosts()) {
      try {
        RuntimeApiClient.Reply reply = client.get(host, "/paddock/capacity");
        if (reply.ok() && reply.object().get("free") instanceof Number free) {
          offers.add(new Placement.Offer(host, free.intValue()));
        } else {
          LOG.log(
              System.Logger.Level.WARNING,
              "runtime API {0} reports no capacity ({1}); not placing there",
              host,
              reply.detail());
        }
      } catch (RuntimeApiClient.UnreachableException e) {
        LOG.log(
            System.Logger.Level.WARNING, "runtime API {0} unreachable; not placing there", host);
      }
    }
    return offers;
  }

  @Override
  public RuntimeState inspect(RuntimeHandle handle) {
    if (handle.attributes().getOrDefault(HOST, "").isBlank()) {
      return RuntimeState.missing(); // a handle naming no host names no runtime
    }
    Optional<RemoteHost> host = host(handle);
    if (host.isEmpty()) {
      return new RuntimeState(
          SandboxStatus.ERROR,
          List.of(),
          Optional.of(
              new RuntimeFailure(
                  RuntimeFailure.Kind.ENGINE_UNREACHABLE,
                  "runtime API " + handle.attributes().get(HOST) + " is no longer configured")));
    }
    RuntimeApiClient.Reply reply =
        client.get(host.get(), "/sessions/" + encode(handle.sandboxId()));
    if (reply.status() == 404 || !sameRuntime(handle, reply.object())) {
      return RuntimeState.missing();
    }
    if (!reply.ok()) {
      throw new IllegalStateException(
          "runtime API "
              + host.get()
              + " cannot report sandbox "
              + handle.sandboxId()
              + ": "
              + reply.detail());
    }
    return state(host.get(), reply.object());
  }

  private RuntimeState state(RemoteHost host, Map<String, Object> runtime) {
    String status =
        runtime.get("status") instanceof String s ? s.toLowerCase(java.util.Locale.ROOT) : "";
    SandboxStatus mapped =
        switch (status) {
          case "running" -> SandboxStatus.RUNNING;
          case "starting" -> SandboxStatus.STARTING;
          case "paused" -> SandboxStatus.PAUSED;
          case "error" -> SandboxStatus.ERROR;
          default -> SandboxStatus.MISSING;
        };
    if (mapped == SandboxStatus.ERROR) {
      return new RuntimeState(mapped, List.of(), Optional.of(failure(host, runtime)));
    }
    if (mapped != SandboxStatus.RUNNING || !(runtime.get("url") instanceof String url)) {
      return new RuntimeState(
          mapped == SandboxStatus.RUNNING ? SandboxStatus.STARTING : mapped,
          List.of(),
          Optional.empty());
    }
    boolean services = runtime.get("work_hosts") instanceof Map<?, ?> hosts && !hosts.isEmpty();
    return new RuntimeState(
        mapped, RuntimeUrls.exposed(url, runtimeId(runtime), services), Optional.empty());
  }

  @Override
  public void pause(RuntimeHandle handle) {
    RemoteHost host = requireHost(handle);
    RuntimeApiClient.Reply reply =
        client.post(host, "/pause", runtimeBody(handle), settings.timeout());
    if (!reply.ok() && reply.status() != 404) {
      throw new IllegalStateException(
          "runtime API "
              + host
              + " did not pause sandbox "
              + handle.sandboxId()
              + ": "
              + reply.detail());
    }
  }

  @Override
  public RuntimeHandle resume(RuntimeHandle handle) {
    RemoteHost host = requireHost(handle);
    RuntimeApiClient.Reply reply;
    try {
      reply = client.post(host, "/resume", runtimeBody(handle), settings.startTimeout());
    } catch (RuntimeApiClient.UnreachableException e) {
      throw RuntimeStartException.of(RuntimeFailure.Kind.ENGINE_UNREACHABLE, e.getMessage(), e);
    }
    if (reply.status() == 409 && inspect(handle).status() == SandboxStatus.RUNNING) {
      return handle; // resumed already (a reply lost before): the same runtime, running
    }
    if (!reply.ok()) {
      throw RuntimeStartException.of(
          RuntimeFailure.Kind.UNKNOWN,
          "runtime API "
              + host
              + " did not resume sandbox "
              + handle.sandboxId()
              + ": "
              + reply.detail(),
          null);
    }
    if (!STARTED.contains(reply.string("status").orElse(""))) {
      throw new RuntimeStartException(failure(host, reply.object()));
    }
    return handle(host, reply.object());
  }

  @Override
  public void destroy(RuntimeHandle handle) {
    RemoteHost host = requireHost(handle);
    RuntimeApiClient.Reply reply =
        client.post(host, "/stop", runtimeBody(handle), settings.startTimeout());
    if (!reply.ok() && reply.status() != 404) {
      throw new IllegalStateException(
          "runtime API "
              + host
              + " did not stop sandbox "
              + handle.sandboxId()
              + ": "
              + reply.detail());
    }
  }

  /** This control plane's sessions on every reachable host (an unreachable one is skipped). */
  @Override
  public List<RuntimeHandle> list() {
    List<RuntimeHandle> handles = new ArrayList<>();
    for (RemoteHost host : settings.hosts()) {
      ownSessions(host).forEach(runtime -> handles.add(handle(host, runtime)));
    }
    return handles;
  }

  /** The sessions on {@code host} carrying this control plane's tag; none when unreachable. */
  private List<Map<String, Object>> ownSessions(RemoteHost host) {
    List<Map<String, Object>> own = new ArrayList<>();
    try {
      RuntimeApiClient.Reply reply = client.get(host, "/list");
      for (Object runtime : RuntimeApiClient.list(reply.object().get("runtimes"))) {
        if (runtime instanceof Map<?, ?> map
            && settings.client().equals(map.get("paddock_client"))) {
          @SuppressWarnings("unchecked")
          Map<String, Object> entry = (Map<String, Object>) map;
          own.add(entry);
        }
      }
    } catch (RuntimeApiClient.UnreachableException e) {
      LOG.log(System.Logger.Level.WARNING, "runtime API {0} unreachable; not listed now", host);
    }
    return own;
  }

  private void stopIfStarted(RemoteHost host, String sandboxId) {
    try {
      RuntimeApiClient.Reply found = client.get(host, "/sessions/" + encode(sandboxId));
      if (found.ok() && settings.client().equals(found.object().get("paddock_client"))) {
        stopQuietly(handle(host, found.object()));
      }
    } catch (RuntimeException e) {
      LOG.log(
          System.Logger.Level.WARNING,
          "sandbox {0}: cannot tell whether its lost start happened on {1}; reconcile will see",
          sandboxId,
          host);
    }
  }

  private void stopQuietly(RuntimeHandle handle) {
    try {
      destroy(handle);
    } catch (RuntimeException e) {
      LOG.log(
          System.Logger.Level.WARNING,
          "cannot stop the failed runtime of " + handle.sandboxId(),
          e);
    }
  }

  /** One way to make a handle, so start, resume and list give equal handles for one runtime. */
  private static RuntimeHandle handle(RemoteHost host, Map<String, Object> runtime) {
    Map<String, String> attributes = new LinkedHashMap<>();
    attributes.put(HOST, host.url());
    attributes.put(RUNTIME_ID, runtimeId(runtime));
    if (runtime.get("paddock_unenforced") instanceof List<?> unenforced && !unenforced.isEmpty()) {
      attributes.put(
          RuntimeHandle.UNENFORCED,
          String.join(",", unenforced.stream().map(String::valueOf).toList()));
    }
    String sessionId = runtime.get("session_id") instanceof String s ? s : "";
    return new RuntimeHandle(sessionId, NAME, attributes);
  }

  private static String runtimeId(Map<String, Object> runtime) {
    Object id = runtime.get("runtime_id") != null ? runtime.get("runtime_id") : runtime.get("id");
    if (!(id instanceof String s) || s.isEmpty()) {
      throw new IllegalStateException("the runtime API's reply carries no runtime_id");
    }
    return s;
  }

  private static boolean sameRuntime(RuntimeHandle handle, Map<String, Object> runtime) {
    return handle.attributes().get(RUNTIME_ID).equals(runtime.get("runtime_id"));
  }

  private static RuntimeFailure failure(RemoteHost host, Map<String, Object> runtime) {
    RuntimeFailure.Kind kind = kind(runtime);
    return new RuntimeFailure(
        kind,
        "runtime API "
            + host
            + ": "
            + runtime.get("paddock_failure_kind")
            + " "
            + runtime.get("status_detail"));
  }

  /**
   * The failure class the runtime API reported: a shared kind by its id, a kind of the runtime
   * API's own backend with the safe message it sent (classification is open), else UNKNOWN.
   */
  private static RuntimeFailure.Kind kind(Map<String, Object> runtime) {
    if (!(runtime.get("paddock_failure_kind") instanceof String id)) {
      return RuntimeFailure.Kind.UNKNOWN;
    }
    for (RuntimeFailure.Kind shared : RuntimeFailure.Kind.shared()) {
      if (shared.id().equals(id)) {
        return shared;
      }
    }
    try {
      if (runtime.get("paddock_failure_message") instanceof String message) {
        return RuntimeFailure.Kind.of(id, message);
      }
    } catch (IllegalArgumentException e) {
      // a malformed id or message: UNKNOWN, with what was sent in the raw detail
    }
    return RuntimeFailure.Kind.UNKNOWN;
  }

  /**
   * Every session of this control plane with its state, from one {@code GET /list} per host (no
   * call per sandbox): what reconcile reads.
   */
  @Override
  public List<ListedRuntime> listWithState() {
    List<ListedRuntime> listed = new ArrayList<>();
    for (RemoteHost host : settings.hosts()) {
      for (Map<String, Object> runtime : ownSessions(host)) {
        listed.add(new ListedRuntime(handle(host, runtime), state(host, runtime)));
      }
    }
    return listed;
  }

  /**
   * The agent straight at the URL its runtime API reports (the agent checks the admin key the
   * control plane derives); refused for a sandbox whose host is no longer configured, whose URL
   * nobody vouches for any more.
   */
  @Override
  public SandboxAgent agent(RuntimeHandle handle, SandboxAgent direct) {
    if (host(handle).isEmpty()) {
      return SandboxAgent.refusing(
          "sandbox " + handle.sandboxId() + "'s runtime API is no longer configured");
    }
    return direct;
  }

  private Optional<RemoteHost> host(RuntimeHandle handle) {
    String url = handle.attributes().getOrDefault(HOST, "");
    return settings.hosts().stream().filter(h -> h.url().equals(url)).findFirst();
  }

  private RemoteHost requireHost(RuntimeHandle handle) {
    return host(handle)
        .orElseThrow(
            () ->
                new IllegalStateException(
                    "sandbox "
                        + handle.sandboxId()
                        + " runs on runtime API "
                        + handle.attributes().get(HOST)
                        + ", which "
                        + RemoteSettings.RUNTIMES.name()
                        + " no longer lists"));
  }

  private static Map<String, Object> runtimeBody(RuntimeHandle handle) {
    return Map.of("runtime_id", handle.attributes().getOrDefault(RUNTIME_ID, ""));
  }

  private static String encode(String id) {
    return URLEncoder.encode(id, StandardCharsets.UTF_8);
  }

  @Override
  public void close() {
    client.close();
  }
}
