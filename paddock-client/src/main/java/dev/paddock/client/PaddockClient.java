package dev.paddock.client;

import dev.paddock.api.ExposedUrl;
import dev.paddock.api.Page;
import dev.paddock.api.PageRequest;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxStatus;
import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

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

  public Page<SandboxInfo> list(PageRequest page) {
    String query =
        "/api/v1/sandboxes/search?limit="
            + page.limit()
            + page.pageId().map(p -> "&page_id=" + Http.encode(p)).orElse("");
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
                            + " from this control plane (it keeps keys in memory only); pause and"
                            + " resume it to get a new one"));
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
        SandboxStatus.valueOf((String) m.get("status")),
        Optional.ofNullable((String) m.get("session_api_key")),
        urls,
        Instant.parse((String) m.get("created_at")),
        Optional.ofNullable((String) m.get("status_detail")));
  }
}
