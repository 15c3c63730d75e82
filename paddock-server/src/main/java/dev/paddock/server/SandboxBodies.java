package dev.paddock.server;

import dev.paddock.api.LifetimeAction;
import dev.paddock.api.Resources;
import dev.paddock.api.StartRequest;
import dev.paddock.api.settings.Setting;
import dev.paddock.http.HttpError;
import dev.paddock.http.Json;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;

/**
 * The JSON bodies of the sandbox routes, read strictly: malformed JSON is a 400, a field nobody
 * knows or a value of the wrong type a 422 naming the field. JSON {@code null} means "not given".
 * Values are checked for range by the service, which every caller shares.
 */
final class SandboxBodies {
  static final Set<String> CREATE_FIELDS =
      Set.of(
          "sandbox_spec_id",
          "sandbox_id",
          "image",
          "env",
          "resources",
          "labels",
          "working_dir",
          "timeout",
          "idle_timeout",
          "on_timeout",
          "on_idle",
          "auto_resume");
  private static final Set<String> RESOURCE_FIELDS = Set.of("cpus", "memory", "pids", "disk");
  private static final long MAX_SECONDS = Duration.ofDays(3650).toSeconds();

  private final Map<String, Object> fields;

  private SandboxBodies(Map<String, Object> fields) {
    this.fields = fields;
  }

  /** Parses {@code body} (empty: no fields), refusing fields outside {@code allowed}. */
  static SandboxBodies parse(byte[] body, Set<String> allowed) {
    if (body.length == 0) {
      return new SandboxBodies(Map.of());
    }
    Map<String, Object> fields = Json.parseObject(body);
    requireKnown("", fields, allowed);
    return new SandboxBodies(fields);
  }

  private static void requireKnown(String prefix, Map<String, ?> fields, Set<String> allowed) {
    Set<String> unknown = new TreeSet<>(fields.keySet());
    unknown.removeAll(allowed);
    if (!unknown.isEmpty()) {
      throw HttpError.unprocessable(
          "unknown field(s) "
              + unknown.stream().map(f -> prefix + f).toList()
              + "; allowed: "
              + new TreeSet<>(allowed).stream().map(f -> prefix + f).toList());
    }
  }

  boolean has(String name) {
    return fields.get(name) != null;
  }

  /** The create request the body describes, spec and id as given by {@code query} too. */
  StartRequest startRequest(Optional<String> querySpec, Optional<String> queryId) {
    StartRequest.Builder request = StartRequest.builder();
    agreed("sandbox_spec_id", querySpec).ifPresent(request::specId);
    agreed("sandbox_id", queryId).ifPresent(request::sandboxId);
    string("image").ifPresent(request::image);
    stringMap("env").ifPresent(request::env);
    stringMap("labels").ifPresent(request::labels);
    object("resources").map(SandboxBodies::resources).ifPresent(request::resources);
    string("working_dir").ifPresent(request::workingDir);
    seconds("timeout").ifPresent(request::timeout);
    seconds("idle_timeout").ifPresent(request::idleTimeout);
    action("on_timeout").ifPresent(request::onTimeout);
    action("on_idle").ifPresent(request::onIdle);
    bool("auto_resume").ifPresent(request::autoResume);
    return request.build();
  }

  /** The body's value of {@code name}, which must equal the query's when both are given. */
  private Optional<String> agreed(String name, Optional<String> query) {
    Optional<String> body = string(name);
    if (body.isPresent() && query.isPresent() && !body.equals(query)) {
      throw HttpError.badRequest(
          "the query parameter "
              + name
              + "='"
              + query.get()
              + "' and the body's \""
              + name
              + "\": \""
              + body.get()
              + "\" disagree; give one or make them equal");
    }
    return body.or(() -> query);
  }

  Optional<String> string(String name) {
    Object value = fields.get(name);
    if (value == null) {
      return Optional.empty();
    }
    if (!(value instanceof String s)) {
      throw wrongType(name, "a string", value);
    }
    return Optional.of(s);
  }

  Optional<Boolean> bool(String name) {
    Object value = fields.get(name);
    if (value == null) {
      return Optional.empty();
    }
    if (!(value instanceof Boolean b)) {
      throw wrongType(name, "a boolean", value);
    }
    return Optional.of(b);
  }

  Optional<Map<String, String>> stringMap(String name) {
    return object(name).map(map -> strings(name, map));
  }

  private static Map<String, String> strings(String name, Map<String, Object> map) {
    Map<String, String> strings = new LinkedHashMap<>();
    map.forEach(
        (key, value) -> {
          if (!(value instanceof String s)) {
            throw wrongType(name + "." + key, "a string", value);
          }
          strings.put(key, s);
        });
    return strings;
  }

  @SuppressWarnings("unchecked")
  private Optional<Map<String, Object>> object(String name) {
    Object value = fields.get(name);
    if (value == null) {
      return Optional.empty();
    }
    if (!(value instanceof Map<?, ?> map)) {
      throw wrongType(name, "an object", value);
    }
    return Optional.of((Map<String, Object>) map);
  }

  /** Whole seconds, at least 1. */
  Optional<Duration> seconds(String name) {
    Object value = fields.get(name);
    if (value == null) {
      return Optional.empty();
    }
    long seconds = wholeNumber(name, value, "a whole number of seconds");
    if (seconds < 1 || seconds > MAX_SECONDS) {
      throw HttpError.unprocessable(
          "field '" + name + "' must be between 1 and " + MAX_SECONDS + " seconds, got " + seconds);
    }
    return Optional.of(Duration.ofSeconds(seconds));
  }

  private Optional<LifetimeAction> action(String name) {
    return string(name).map(v -> LifetimeAction.fromWire(name, v));
  }

  private static Resources resources(Map<String, Object> m) {
    requireKnown("resources.", m, RESOURCE_FIELDS);
    return new Resources(
        cpus(m.get("cpus")),
        size("resources.memory", m.get("memory")),
        pids(m.get("pids")),
        size("resources.disk", m.get("disk")));
  }

  private static OptionalDouble cpus(Object value) {
    if (value == null) {
      return OptionalDouble.empty();
    }
    if (!(value instanceof Number n) || !(n.doubleValue() > 0) || n.doubleValue() > 1024) {
      throw HttpError.unprocessable(
          "field 'resources.cpus' must be a number of cores above 0, got " + describe(value));
    }
    return OptionalDouble.of(n.doubleValue());
  }

  private static OptionalInt pids(Object value) {
    if (value == null) {
      return OptionalInt.empty();
    }
    long pids = wholeNumber("resources.pids", value, "a whole number of processes");
    if (pids < 1 || pids > Integer.MAX_VALUE) {
      throw HttpError.unprocessable("field 'resources.pids' must be at least 1, got " + pids);
    }
    return OptionalInt.of((int) pids);
  }

  private static final Setting<Long> SIZE = Setting.size("size", "bytes or a size");

  /** Bytes as a whole number, or a size string such as {@code 512m} or {@code 2g}. */
  private static OptionalLong size(String name, Object value) {
    if (value == null) {
      return OptionalLong.empty();
    }
    long bytes;
    if (value instanceof String text) {
      try {
        bytes = SIZE.parse(text.strip());
      } catch (IllegalArgumentException e) {
        throw HttpError.unprocessable(
            "field '" + name + "' must be bytes or a size such as 512m or 2g, got '" + text + "'");
      }
    } else {
      bytes = wholeNumber(name, value, "bytes or a size such as 512m or 2g");
    }
    if (bytes < 1) {
      throw HttpError.unprocessable("field '" + name + "' must be above 0 bytes");
    }
    return OptionalLong.of(bytes);
  }

  private static long wholeNumber(String name, Object value, String expected) {
    if (value instanceof Integer || value instanceof Long) {
      return ((Number) value).longValue();
    }
    if (value instanceof Double d && d == Math.rint(d) && Math.abs(d) < 1e15) {
      return d.longValue();
    }
    throw wrongType(name, expected, value);
  }

  private static HttpError wrongType(String name, String expected, Object value) {
    return HttpError.unprocessable(
        "field '" + name + "' must be " + expected + ", got " + describe(value));
  }

  private static String describe(Object value) {
    return switch (value) {
      case String s -> "a string";
      case Boolean b -> "a boolean";
      case Number n -> "the number " + n;
      case java.util.List<?> l -> "a list";
      case Map<?, ?> m -> "an object";
      default -> value.getClass().getSimpleName();
    };
  }
}
