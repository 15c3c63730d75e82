package dev.paddock.server;

import dev.paddock.api.ExposedUrl;
import dev.paddock.api.Page;
import dev.paddock.api.QueuePlace;
import dev.paddock.api.Resources;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxSettings;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.SandboxStatus;
import dev.paddock.store.ApiKeyRecord;
import dev.paddock.store.UserRecord;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/** The wire shapes (OpenHands' field names) of the model, as maps for the JSON binder. */
final class Views {
  private Views() {}

  static String time(Instant instant) {
    return DateTimeFormatter.ISO_INSTANT.format(instant);
  }

  static Map<String, Object> sandbox(SandboxInfo info) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("id", info.id());
    m.put("created_by_user_id", info.createdByUserId().orElse(null));
    m.put("sandbox_spec_id", info.sandboxSpecId());
    // OpenHands' status enum has no QUEUED: a queued sandbox is STARTING there, with "queue" set.
    m.put(
        "status",
        info.status() == SandboxStatus.QUEUED
            ? SandboxStatus.STARTING.name()
            : info.status().name());
    m.put("session_api_key", info.sessionApiKey().orElse(null));
    List<Map<String, Object>> urls = new ArrayList<>();
    for (ExposedUrl url : info.exposedUrls()) {
      Map<String, Object> u = new LinkedHashMap<>();
      u.put("name", url.name());
      u.put("url", url.url());
      u.put("port", url.port());
      urls.add(u);
    }
    m.put("exposed_urls", urls);
    m.put("created_at", time(info.createdAt()));
    m.put("status_detail", info.statusDetail().orElse(null));
    SandboxSettings settings = info.settings();
    m.put("image", settings.image().orElse(null));
    m.put("labels", settings.labels());
    m.put("resources", resources(settings.resources()));
    m.put("resources_unenforced", info.unenforcedLimits());
    m.put("working_dir", settings.workingDir().orElse(null));
    m.put("timeout_at", info.timeoutAt().map(Views::time).orElse(null));
    m.put("idle_timeout", settings.idleTimeout().map(Duration::toSeconds).orElse(null));
    m.put("on_timeout", settings.onTimeout().wireName());
    m.put("on_idle", settings.onIdle().wireName());
    m.put("auto_resume", settings.autoResume());
    m.put("public_ports", settings.publicPorts());
    m.put("last_activity_at", info.lastActivityAt().map(Views::time).orElse(null));
    m.put("queue", info.status() == SandboxStatus.QUEUED ? queue(info) : null);
    return m;
  }

  /** Where a QUEUED sandbox stands; position and wait are null when no live entry was found. */
  private static Map<String, Object> queue(SandboxInfo info) {
    Map<String, Object> q = new LinkedHashMap<>();
    q.put("position", info.queue().map(QueuePlace::position).orElse(null));
    q.put("length", info.queue().map(QueuePlace::length).orElse(null));
    q.put("enqueued_at", info.queue().map(p -> time(p.enqueuedAt())).orElse(null));
    q.put("deadline", info.queue().map(p -> time(p.deadline())).orElse(null));
    q.put(
        "expected_wait_seconds",
        info.queue().flatMap(QueuePlace::expectedWait).map(Duration::toSeconds).orElse(null));
    return q;
  }

  /** Limits by their create names, memory and disk in bytes; absent limits are left out. */
  static Map<String, Object> resources(Resources r) {
    Map<String, Object> m = new LinkedHashMap<>();
    r.cpus().ifPresent(v -> m.put("cpus", v));
    r.memoryBytes().ifPresent(v -> m.put("memory", v));
    r.pids().ifPresent(v -> m.put("pids", v));
    r.diskBytes().ifPresent(v -> m.put("disk", v));
    return m;
  }

  static Map<String, Object> spec(SandboxSpec spec) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("id", spec.id());
    m.put("command", spec.command().isEmpty() ? null : spec.command());
    m.put("created_at", time(spec.createdAt()));
    m.put("initial_env", spec.initialEnv());
    m.put("working_dir", spec.workingDir());
    m.put("agent_server", spec.agentServer().name().toLowerCase(java.util.Locale.ROOT));
    Map<String, Object> resources = new LinkedHashMap<>();
    spec.resources().cpus().ifPresent(v -> resources.put("cpus", v));
    spec.resources().memoryBytes().ifPresent(v -> resources.put("memory_bytes", v));
    spec.resources().pids().ifPresent(v -> resources.put("pids", v));
    spec.resources().diskBytes().ifPresent(v -> resources.put("disk_bytes", v));
    m.put("resources", resources);
    m.put("timeout", spec.timeout().map(Duration::toSeconds).orElse(null));
    m.put("idle_timeout", spec.idleTimeout().map(Duration::toSeconds).orElse(null));
    return m;
  }

  static <T> Map<String, Object> page(Page<T> page, Function<T, Map<String, Object>> view) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("items", page.items().stream().map(view).toList());
    m.put("next_page_id", page.nextPageId().orElse(null));
    return m;
  }

  static Map<String, Object> user(UserRecord user) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("id", user.id());
    m.put("name", user.name());
    m.put("admin", user.admin());
    m.put("created_at", time(user.createdAt()));
    return m;
  }

  static Map<String, Object> apiKey(ApiKeyRecord key) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("id", key.id());
    m.put("user_id", key.userId());
    m.put("label", key.label());
    m.put("created_at", time(key.createdAt()));
    m.put("revoked_at", key.revokedAt().map(Views::time).orElse(null));
    return m;
  }
}
