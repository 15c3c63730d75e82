package dev.paddock.runtimeapi;

import dev.paddock.api.Resources;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * One session as the sessions file holds it, and back. What is not written: the caller's
 * environment values (only their names), the raw failure detail (it went to the log) and any key.
 */
final class SessionJson {
  private SessionJson() {}

  static Map<String, Object> json(Session session) {
    RuntimeRequest request = session.request();
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("session_id", session.sessionId());
    json.put("runtime_id", session.runtimeId());
    json.put("created_at", session.createdAt().toString());
    json.put("client", session.client().orElse(null));
    json.put("caller_keyed", session.callerKeyed());
    json.put("resource_factor", session.resourceFactor());
    json.put("generation", session.generation());
    json.put("phase", session.phase().name());
    json.put("spec", spec(request.spec()));
    json.put("environment_names", List.copyOf(request.env().keySet()));
    json.put("session_key_digests", request.sessionKeyDigests());
    json.put("admin_key_digest", request.adminKeyDigest());
    json.put("handle", session.handle().map(SessionJson::handle).orElse(null));
    json.put("failure", session.failure().map(SessionJson::failure).orElse(null));
    return json;
  }

  /** A session as saved; its environment values are gone ({@link Session#remakeRefusal}). */
  static Session session(Map<String, Object> json) {
    Map<String, String> names = new LinkedHashMap<>();
    for (Object name : list(json.get("environment_names"))) {
      names.put(String.valueOf(name), "");
    }
    RuntimeRequest request =
        new RuntimeRequest(
            string(json, "session_id"),
            spec(map(json.get("spec"))),
            names,
            strings(json.get("session_key_digests")),
            string(json, "admin_key_digest"));
    Session session =
        new Session(
            string(json, "runtime_id"),
            Instant.parse(string(json, "created_at")),
            request,
            optionalString(json, "client"),
            Boolean.TRUE.equals(json.get("caller_keyed")),
            ((Number) json.get("resource_factor")).intValue(),
            ((Number) json.get("generation")).longValue());
    session.restore(
        Session.Phase.valueOf(string(json, "phase")),
        Optional.ofNullable(json.get("handle")).map(h -> handle(map(h))),
        Optional.ofNullable(json.get("failure")).map(f -> failure(map(f))),
        names.isEmpty()
            ? Optional.empty()
            : Optional.of(
                "its caller's environment was not kept when the runtime API restarted"
                    + " (values are never written to disk)"));
    return session;
  }

  private static Map<String, Object> spec(SandboxSpec spec) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("id", spec.id());
    json.put("command", spec.command());
    json.put("env", spec.initialEnv());
    json.put("working_dir", spec.workingDir());
    json.put("created_at", spec.createdAt().toString());
    json.put("image", spec.image().orElse(null));
    json.put("timeout_ms", spec.timeout().map(Duration::toMillis).orElse(null));
    json.put("idle_timeout_ms", spec.idleTimeout().map(Duration::toMillis).orElse(null));
    json.put("agent_server", spec.agentServer().name());
    Resources r = spec.resources();
    json.put("cpus", r.cpus().isPresent() ? r.cpus().getAsDouble() : null);
    json.put("memory_bytes", r.memoryBytes().isPresent() ? r.memoryBytes().getAsLong() : null);
    json.put("pids", r.pids().isPresent() ? r.pids().getAsInt() : null);
    json.put("disk_bytes", r.diskBytes().isPresent() ? r.diskBytes().getAsLong() : null);
    return json;
  }

  private static SandboxSpec spec(Map<String, Object> json) {
    SandboxSpec.Builder spec =
        SandboxSpec.builder(string(json, "id"))
            .command(strings(json.get("command")))
            .env(stringMap(json.get("env")))
            .workingDir(string(json, "working_dir"))
            .createdAt(Instant.parse(string(json, "created_at")))
            .agentServer(SandboxSpec.AgentServer.valueOf(string(json, "agent_server")))
            .resources(
                new Resources(
                    number(json, "cpus")
                        .map(n -> OptionalDouble.of(n.doubleValue()))
                        .orElse(OptionalDouble.empty()),
                    number(json, "memory_bytes")
                        .map(n -> OptionalLong.of(n.longValue()))
                        .orElse(OptionalLong.empty()),
                    number(json, "pids")
                        .map(n -> OptionalInt.of(n.intValue()))
                        .orElse(OptionalInt.empty()),
                    number(json, "disk_bytes")
                        .map(n -> OptionalLong.of(n.longValue()))
                        .orElse(OptionalLong.empty())));
    optionalString(json, "image").ifPresent(spec::image);
    number(json, "timeout_ms").ifPresent(n -> spec.timeout(Duration.ofMillis(n.longValue())));
    number(json, "idle_timeout_ms")
        .ifPresent(n -> spec.idleTimeout(Duration.ofMillis(n.longValue())));
    return spec.build();
  }

  private static Map<String, Object> handle(RuntimeHandle handle) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("sandbox_id", handle.sandboxId());
    json.put("backend", handle.backend());
    json.put("attributes", handle.attributes());
    return json;
  }

  private static RuntimeHandle handle(Map<String, Object> json) {
    return new RuntimeHandle(
        string(json, "sandbox_id"), string(json, "backend"), stringMap(json.get("attributes")));
  }

  private static Map<String, Object> failure(RuntimeFailure failure) {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("kind", failure.kind().id());
    json.put("kind_message", failure.kind().safeMessage());
    json.put("message", failure.safeMessage());
    return json;
  }

  private static RuntimeFailure failure(Map<String, Object> json) {
    RuntimeFailure.Kind kind =
        RuntimeFailure.Kind.of(string(json, "kind"), string(json, "kind_message"));
    return new RuntimeFailure(
        kind, string(json, "message"), "(detail logged before the runtime API restarted)");
  }

  // Reading the parsed JSON; a missing or mistyped field fails the load, naming the field.

  static String string(Map<String, Object> json, String field) {
    return optionalString(json, field)
        .orElseThrow(() -> new IllegalArgumentException("field '" + field + "' is missing"));
  }

  private static Optional<String> optionalString(Map<String, Object> json, String field) {
    return Optional.ofNullable(json.get(field)).map(String::valueOf);
  }

  private static Optional<Number> number(Map<String, Object> json, String field) {
    Object value = json.get(field);
    if (value != null && !(value instanceof Number)) {
      throw new IllegalArgumentException("field '" + field + "' is not a number");
    }
    return Optional.ofNullable((Number) value);
  }

  static Map<String, Object> map(Object value) {
    if (!(value instanceof Map<?, ?> raw)) {
      throw new IllegalArgumentException("expected an object, got " + value);
    }
    Map<String, Object> json = new LinkedHashMap<>();
    raw.forEach((k, v) -> json.put(String.valueOf(k), v));
    return json;
  }

  static List<?> list(Object value) {
    if (value == null) {
      return List.of();
    }
    if (!(value instanceof List<?> list)) {
      throw new IllegalArgumentException("expected an array, got " + value);
    }
    return list;
  }

  private static List<String> strings(Object value) {
    return list(value).stream().map(String::valueOf).toList();
  }

  private static Map<String, String> stringMap(Object value) {
    Map<String, String> strings = new LinkedHashMap<>();
    if (value != null) {
      map(value).forEach((k, v) -> strings.put(k, String.valueOf(v)));
    }
    return strings;
  }
}
