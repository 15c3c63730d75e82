package dev.paddock.client;

import dev.paddock.api.ExposedUrl;
import dev.paddock.api.LifetimeAction;
import dev.paddock.api.Page;
import dev.paddock.api.PageRequest;
import dev.paddock.api.QueuePlace;
import dev.paddock.api.Resources;
import dev.paddock.api.SandboxFilter;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxSettings;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.StartRequest;
import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * A client of the control plane's REST API. Create with {@link #connect(URI, String)}; every call
 * throws {@link PaddockClientException} with the server's message on failure. Thread-safe.
 */
public final class PaddockClient {
  private final Http http;

  private PaddockClient(Http http) {
    this.http = http;
  }

  /** A client for the control plane at {@code baseUrl}, authenticating with {@code apiKey}. */
  public static PaddockClient connect(URI baseUrl, String apiKey) {
    return new PaddockClient(new Http(baseUrl, "Authorization", "Bearer " + apiKey));
  }

  /** Creates a sandbox; with {@code wait}, returns once it is RUNNING and its agent answers. */
  public SandboxInfo create(Optional<String> specId, boolean wait, Duration timeout) {
    StringBuilder query = new StringBuilder("/api/v1/sandboxes?wait=").append(wait);
    specId.ifPresent(s -> query.append("&sandbox_spec_id=").append(Http.encode(s)));
    if (wait) {
      query.append("&timeout=").append(Math.max(1, timeout.toSeconds()));
    }
    return sandbox(
        http.object(
            http.request(query.toString()).POST(HttpRequest.BodyPublishers.noBody()).build()));
  }

  /**
   * Creates a sandbox as {@code request} asks (image, env, resources, labels, lifetimes); with
   * {@code wait}, returns once it is RUNNING and its agent answers. With a {@linkplain
   * StartRequest#queueTimeout() queue timeout}, a create past capacity waits in the server's start
   * queue up to that long for a slot (the call blocks meanwhile; the HTTP request timeout is
   * stretched to cover it) and fails with "at capacity" (429) only after it.
   */
  public SandboxInfo create(StartRequest request, boolean wait, Duration timeout) {
    StringBuilder query = new StringBuilder("/api/v1/sandboxes?wait=").append(wait);
    if (wait) {
      query.append("&timeout=").append(Math.max(1, timeout.toSeconds()));
    }
    request
        .queueTimeout()
        .ifPresent(q -> query.append("&queue_timeout=").append(Math.max(1, q.toSeconds())));
    HttpRequest.Builder post =
        http.request(query.toString())
            .header("Content-Type", "application/json")
            .POST(Http.body(createBody(request)));
    request.queueTimeout().ifPresent(q -> post.timeout(Http.TIMEOUT.plus(q)));
    return sandbox(http.object(post.build()));
  }

  private static Map<String, Object> createBody(StartRequest request) {
    Map<String, Object> body = new LinkedHashMap<>();
    request.specId().ifPresent(v -> body.put("sandbox_spec_id", v));
    request.sandboxId().ifPresent(v -> body.put("sandbox_id", v));
    request.image().ifPresent(v -> body.put("image", v));
    if (!request.env().isEmpty()) {
      body.put("env", request.env());
    }
    if (!request.labels().isEmpty()) {
      body.put("labels", request.labels());
    }
    Map<String, Object> resources = resourcesBody(request.resources());
    if (!resources.isEmpty()) {
      body.put("resources", resources);
    }
    request.workingDir().ifPresent(v -> body.put("working_dir", v));
    request.timeout().ifPresent(v -> body.put("timeout", v.toSeconds()));
    request.idleTimeout().ifPresent(v -> body.put("idle_timeout", v.toSeconds()));
    request.onTimeout().ifPresent(v -> body.put("on_timeout", v.wireName()));
    request.onIdle().ifPresent(v -> body.put("on_idle", v.wireName()));
    if (request.autoResume()) {
      body.put("auto_resume", true);
    }
    return body;
  }

  private static Map<String, Object> resourcesBody(Resources r) {
    Map<String, Object> m = new LinkedHashMap<>();
    r.cpus().ifPresent(v -> m.put("cpus", v));
    r.memoryBytes().ifPresent(v -> m.put("memory", v));
    r.pids().ifPresent(v -> m.put("pids", v));
    r.diskBytes().ifPresent(v -> m.put("disk", v));
    return m;
  }

  public Page<SandboxInfo> list(PageRequest page) {
    return list(SandboxFilter.ALL, page);
  }

  /** The sandboxes matching {@code filter} (statuses, every label, spec), newest first. */
  public Page<SandboxInfo> list(SandboxFilter filter, PageRequest page) {
    StringBuilder query = new StringBuilder("/api/v1/sandboxes/search?limit=").append(page.limit());
    page.pageId().ifPresent(p -> query.append("&page_id=").append(Http.encode(p)));
    filter.statuses().forEach(s -> query.append("&status=").append(s.name()));
    filter.labels().forEach((k, v) -> query.append("&label=").append(Http.encode(k + "=" + v)));
    filter.specId().ifPresent(s -> query.append("&sandbox_spec_id=").append(Http.encode(s)));
    return page(query.toString());
  }

  /** Every sandbox spec the server offers (the first is its default). */
  public List<SandboxSpec> specs() {
    List<SandboxSpec> all = new ArrayList<>();
    Optional<String> pageId = Optional.empty();
    do {
      StringBuilder query =
          new StringBuilder("/api/v1/sandbox-specs/search?limit=").append(PageRequest.MAX_LIMIT);
      pageId.ifPresent(p -> query.append("&page_id=").append(Http.encode(p)));
      Map<String, Object> reply = http.object(http.request(query.toString()).GET().build());
      for (Object item : (List<?>) reply.get("items")) {
        all.add(spec(cast(item)));
      }
      pageId = Optional.ofNullable((String) reply.get("next_page_id"));
    } while (pageId.isPresent());
    return all;
  }

  private static SandboxSpec spec(Map<String, Object> m) {
    SandboxSpec.Builder spec = SandboxSpec.builder((String) m.get("id"));
    if (m.get("command") instanceof List<?> command) {
      spec.command(command.stream().map(String::valueOf).toList());
    }
    if (m.get("initial_env") instanceof Map<?, ?> env) {
      Map<String, String> copy = new LinkedHashMap<>();
      env.forEach((k, v) -> copy.put(String.valueOf(k), String.valueOf(v)));
      spec.env(copy);
    }
    spec.workingDir(String.valueOf(m.get("working_dir")));
    if (m.get("resources") instanceof Map<?, ?> r) {
      spec.resources(
          new Resources(
              r.get("cpus") instanceof Number n
                  ? OptionalDouble.of(n.doubleValue())
                  : OptionalDouble.empty(),
              r.get("memory_bytes") instanceof Number n
                  ? OptionalLong.of(n.longValue())
                  : OptionalLong.empty(),
              r.get("pids") instanceof Number n
                  ? OptionalInt.of(n.intValue())
                  : OptionalInt.empty(),
              r.get("disk_bytes") instanceof Number n
                  ? OptionalLong.of(n.longValue())
                  : OptionalLong.empty()));
    }
    instant(m.get("created_at")).ifPresent(spec::createdAt);
    if (m.get("timeout") instanceof Number n) {
      spec.timeout(Duration.ofSeconds(n.longValue()));
    }
    if (m.get("idle_timeout") instanceof Number n) {
      spec.idleTimeout(Duration.ofSeconds(n.longValue()));
    }
    return spec.build();
  }

  /** Replaces a sandbox's labels. */
  public SandboxInfo setLabels(String sandboxId, Map<String, String> labels) {
    return sandbox(
        http.object(
            http.request("/api/v1/sandboxes/" + Http.encode(sandboxId))
                .header("Content-Type", "application/json")
                .method("PATCH", Http.body(Map.of("labels", labels)))
                .build()));
  }

  /** Moves the end of a sandbox's lifetime to {@code timeout} from now. */
  public SandboxInfo keepAlive(String sandboxId, Duration timeout) {
    return sandbox(
        http.object(
            http.request("/api/v1/sandboxes/" + Http.encode(sandboxId) + "/keepalive")
                .header("Content-Type", "application/json")
                .POST(Http.body(Map.of("timeout", Math.max(1, timeout.toSeconds()))))
                .build()));
  }

  private Page<SandboxInfo> page(String query) {
    Map<String, Object> reply = http.object(http.request(query).GET().build());
    List<SandboxInfo> items = new ArrayList<>();
    for (Object item : (List<?>) reply.get("items")) {
      items.add(sandbox(cast(item)));
    }
    return new Page<>(items, Optional.ofNullable((String) reply.get("next_page_id")));
  }

  public Optional<SandboxInfo> get(String sandboxId) {
    List<Object> reply =
        http.list(http.request("/api/v1/sandboxes?id=" + Http.encode(sandboxId)).GET().build());
    return reply.isEmpty() || reply.get(0) == null
        ? Optional.empty()
        : Optional.of(sandbox(cast(reply.get(0))));
  }

  public void pause(String sandboxId) {
    http.object(post("/api/v1/sandboxes/" + Http.encode(sandboxId) + "/pause"));
  }

  /** Resumes; the reply carries the new session key. */
  public SandboxInfo resume(String sandboxId) {
    Map<String, Object> reply =
        http.object(post("/api/v1/sandboxes/" + Http.encode(sandboxId) + "/resume"));
    return sandbox(cast(reply.get("sandbox")));
  }

  public void delete(String sandboxId) {
    String id = Http.encode(sandboxId);
    http.object(http.request("/api/v1/sandboxes/" + id + "?sandbox_id=" + id).DELETE().build());
  }

  /**
   * One reading of a RUNNING sandbox's resource use; fields its backend cannot read are empty.
   *
   * @throws PaddockClientException 404 for no such sandbox, 409 when it is not RUNNING
   */
  public dev.paddock.api.SandboxStats stats(String sandboxId) {
    Map<String, Object> m =
        http.object(
            http.request("/api/v1/sandboxes/" + Http.encode(sandboxId) + "/stats").GET().build());
    return new dev.paddock.api.SandboxStats(
        (String) m.get("sandbox_id"),
        Instant.parse((String) m.get("read_at")),
        decimal(m.get("cpu_seconds")),
        decimal(m.get("cpu_percent")),
        whole(m.get("memory_bytes")),
        whole(m.get("memory_peak_bytes")),
        whole(m.get("pids")),
        whole(m.get("disk_bytes")),
        whole(m.get("network_rx_bytes")),
        whole(m.get("network_tx_bytes")));
  }

  private static java.util.OptionalDouble decimal(Object value) {
    return value instanceof Number n
        ? java.util.OptionalDouble.of(n.doubleValue())
        : java.util.OptionalDouble.empty();
  }

  private static java.util.OptionalLong whole(Object value) {
    return value instanceof Number n
        ? java.util.OptionalLong.of(n.longValue())
        : java.util.OptionalLong.empty();
  }

  /**
   * A sandbox's kept log (lifecycle events and its agent's output), also after it was deleted; with
   * {@code follow} the stream goes on with new lines until the sandbox ends. The caller closes it.
   *
   * @throws PaddockClientException 404 when there is no log of that sandbox
   */
  public java.io.InputStream logs(String sandboxId, boolean follow) {
    String path = "/api/v1/sandboxes/" + Http.encode(sandboxId) + "/logs";
    HttpRequest.Builder request = http.request(follow ? path + "?follow=true" : path).GET();
    if (follow) {
      request.timeout(Duration.ofDays(365)); // a follow lasts as long as the sandbox
    }
    return http.stream(request.build());
  }

  /** A client of a RUNNING sandbox's agent-server, with its URL and session key. */
  public AgentClient agent(SandboxInfo sandbox) {
    String url =
        sandbox
            .agentServerUrl()
            .orElseThrow(
                () ->
                    new PaddockClientException(
                        409,
                        "sandbox " + sandbox.id() + " is " + sandbox.status() + ": no agent URL"));
    String key =
        sandbox
            .sessionApiKey()
            .orElseThrow(
                () ->
                    new PaddockClientException(
                        409,
                        "no session key for sandbox "
                            + sandbox.id()
                            + ": it is shown only to its owner while it is RUNNING"));
    return new AgentClient(URI.create(url.endsWith("/") ? url : url + "/"), key);
  }

  /** Creates a user and its first API key (admin only); the key is shown once. */
  public NewUser createUser(String name, boolean admin) {
    Map<String, Object> body = new LinkedHashMap<>();
    body.put("name", name);
    body.put("admin", admin);
    Map<String, Object> reply =
        http.object(
            http.request("/api/v1/users")
                .header("Content-Type", "application/json")
                .POST(Http.body(body))
                .build());
    return new NewUser(
        user(reply), (String) reply.get("api_key_id"), (String) reply.get("api_key"));
  }

  public List<User> users() {
    Map<String, Object> reply = http.object(http.request("/api/v1/users").GET().build());
    List<User> users = new ArrayList<>();
    for (Object item : (List<?>) reply.get("items")) {
      users.add(user(cast(item)));
    }
    return users;
  }

  /** Revokes every API key of a user (admin only); returns how many. */
  public int revokeUser(String userId) {
    Map<String, Object> reply =
        http.object(http.request("/api/v1/users/" + Http.encode(userId)).DELETE().build());
    return ((Number) reply.get("revoked_keys")).intValue();
  }

  /** A sandbox's workspace archives (also after it was deleted); empty when it has none. */
  public List<dev.paddock.api.ArchiveInfo> archives(String sandboxId) {
    HttpRequest request = http.request("/api/v1/archives/" + Http.encode(sandboxId)).GET().build();
    Map<String, Object> reply;
    try {
      reply = http.object(request);
    } catch (PaddockClientException e) {
      if (e.status() == 404) {
        return List.of();
      }
      throw e;
    }
    List<dev.paddock.api.ArchiveInfo> items = new ArrayList<>();
    for (Object item : (List<?>) reply.get("items")) {
      Map<String, Object> m = cast(item);
      items.add(
          new dev.paddock.api.ArchiveInfo(
              (String) m.get("name"),
              (String) m.get("format"),
              ((Number) m.get("byte_count")).longValue(),
              (String) m.get("sha256"),
              Instant.parse((String) m.get("created_at"))));
    }
    return items;
  }

  /** Downloads one archive ({@code name} as {@link #archives} lists it) into {@code target}. */
  public void downloadArchive(String sandboxId, String name, java.nio.file.Path target) {
    String path = "/api/v1/archives/" + Http.encode(sandboxId) + "/" + name;
    try (java.io.InputStream in = http.stream(http.request(path).GET().build())) {
      java.nio.file.Files.copy(in, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    } catch (java.io.IOException e) {
      throw new PaddockClientException("download of " + name + " failed: " + e.getMessage(), e);
    }
  }

  /** A user. */
  public record User(String id, String name, boolean admin, Instant createdAt) {}

  /** A new user with its first API key (shown once). */
  public record NewUser(User user, String apiKeyId, String apiKey) {}

  private HttpRequest post(String path) {
    return http.request(path).POST(HttpRequest.BodyPublishers.noBody()).build();
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> cast(Object value) {
    return (Map<String, Object>) value;
  }

  private static User user(Map<String, Object> m) {
    return new User(
        (String) m.get("id"),
        (String) m.get("name"),
        Boolean.TRUE.equals(m.get("admin")),
        Instant.parse((String) m.get("created_at")));
  }

  static SandboxInfo sandbox(Map<String, Object> m) {
    List<ExposedUrl> urls = new ArrayList<>();
    Object rawUrls = m.get("exposed_urls");
    if (rawUrls instanceof List<?> list) {
      for (Object item : list) {
        Map<String, Object> u = cast(item);
        urls.add(
            new ExposedUrl(
                (String) u.get("name"),
                (String) u.get("url"),
                ((Number) u.get("port")).intValue()));
      }
    }
    return new SandboxInfo(
        (String) m.get("id"),
        Optional.ofNullable((String) m.get("created_by_user_id")),
        (String) m.get("sandbox_spec_id"),
        m.get("queue") instanceof Map<?, ?>
            ? SandboxStatus.QUEUED
            : SandboxStatus.valueOf((String) m.get("status")),
        Optional.ofNullable((String) m.get("session_api_key")),
        urls,
        Instant.parse((String) m.get("created_at")),
        Optional.ofNullable((String) m.get("status_detail")),
        settings(m),
        instant(m.get("timeout_at")),
        instant(m.get("last_activity_at")),
        m.get("resources_unenforced") instanceof List<?> l
            ? l.stream().map(String::valueOf).toList()
            : List.of(),
        queuePlace(m.get("queue")));
  }

  // The server shows a queued sandbox as STARTING (OpenHands' enum) with this object.
  private static Optional<QueuePlace> queuePlace(Object value) {
    if (!(value instanceof Map<?, ?> q)
        || !(q.get("position") instanceof Number position)
        || !(q.get("length") instanceof Number length)) {
      return Optional.empty();
    }
    return Optional.of(
        new QueuePlace(
            position.intValue(),
            length.intValue(),
            Instant.parse((String) q.get("enqueued_at")),
            Instant.parse((String) q.get("deadline")),
            q.get("expected_wait_seconds") instanceof Number n
                ? Optional.of(Duration.ofSeconds(n.longValue()))
                : Optional.empty()));
  }

  private static SandboxSettings settings(Map<String, Object> m) {
    Map<String, String> labels = new LinkedHashMap<>();
    if (m.get("labels") instanceof Map<?, ?> map) {
      map.forEach((k, v) -> labels.put(String.valueOf(k), String.valueOf(v)));
    }
    return new SandboxSettings(
        Optional.ofNullable((String) m.get("image")),
        labels,
        resources(m.get("resources")),
        Optional.ofNullable((String) m.get("working_dir")),
        Optional.empty(),
        m.get("idle_timeout") instanceof Number n
            ? Optional.of(Duration.ofSeconds(n.longValue()))
            : Optional.empty(),
        action(m.get("on_timeout"), LifetimeAction.DELETE),
        action(m.get("on_idle"), LifetimeAction.PAUSE),
        Boolean.TRUE.equals(m.get("auto_resume")),
        m.get("public_ports") instanceof List<?> ports
            ? ports.stream()
                .filter(Number.class::isInstance)
                .map(p -> ((Number) p).intValue())
                .collect(java.util.stream.Collectors.toSet())
            : java.util.Set.of());
  }

  private static Resources resources(Object value) {
    if (!(value instanceof Map<?, ?> r)) {
      return Resources.NONE;
    }
    return new Resources(
        r.get("cpus") instanceof Number n
            ? OptionalDouble.of(n.doubleValue())
            : OptionalDouble.empty(),
        r.get("memory") instanceof Number n ? OptionalLong.of(n.longValue()) : OptionalLong.empty(),
        r.get("pids") instanceof Number n ? OptionalInt.of(n.intValue()) : OptionalInt.empty(),
        r.get("disk") instanceof Number n ? OptionalLong.of(n.longValue()) : OptionalLong.empty());
  }

  private static LifetimeAction action(Object value, LifetimeAction fallback) {
    return value instanceof String s ? LifetimeAction.fromWire("action", s) : fallback;
  }

  private static Optional<Instant> instant(Object value) {
    return value instanceof String s ? Optional.of(Instant.parse(s)) : Optional.empty();
  }
}
