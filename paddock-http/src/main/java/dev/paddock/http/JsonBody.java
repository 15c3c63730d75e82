package dev.paddock.http;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Typed, validating access to a parsed JSON request object. Every violation is a 422 naming the
 * field and what was expected, so a typo such as {@code "timout"} fails loudly instead of silently
 * falling back to a default.
 */
public final class JsonBody {
  private final Map<String, Object> fields;

  private JsonBody(Map<String, Object> fields) {
    this.fields = fields;
  }

  /** Parses {@code body}, rejecting any field outside {@code allowed}. */
  public static JsonBody parse(byte[] body, Set<String> allowed) {
    Map<String, Object> fields = Json.parseObject(body);
    Set<String> unknown = new TreeSet<>(fields.keySet());
    unknown.removeAll(allowed);
    if (!unknown.isEmpty()) {
      throw HttpError.unprocessable(
          "unknown field(s) " + unknown + "; allowed: " + new TreeSet<>(allowed));
    }
    return new JsonBody(fields);
  }

  public String requiredString(String name) {
    return optionalString(name)
        .orElseThrow(() -> HttpError.unprocessable("field '" + name + "' is required"));
  }

  public Optional<String> optionalString(String name) {
    Object value = fields.get(name);
    if (value == null) {
      return Optional.empty();
    }
    if (!(value instanceof String s)) {
      throw HttpError.unprocessable(
          "field '" + name + "' must be a string, got " + typeName(value));
    }
    return Optional.of(s);
  }

  public Optional<Long> optionalLong(String name, long min, long max) {
    Object value = fields.get(name);
    if (value == null) {
      return Optional.empty();
    }
    long number;
    if (value instanceof Integer || value instanceof Long) {
      number = ((Number) value).longValue();
    } else if (value instanceof Double d && d == Math.rint(d) && !d.isInfinite()) {
      number = d.longValue();
    } else {
      throw HttpError.unprocessable(
          "field '" + name + "' must be an integer, got " + typeName(value));
    }
    if (number < min || number > max) {
      throw HttpError.unprocessable(
          "field '" + name + "' must be between " + min + " and " + max + ", got " + number);
    }
    return Optional.of(number);
  }

  public Optional<Boolean> optionalBoolean(String name) {
    Object value = fields.get(name);
    if (value == null) {
      return Optional.empty();
    }
    if (!(value instanceof Boolean b)) {
      throw HttpError.unprocessable(
          "field '" + name + "' must be true or false, got " + typeName(value));
    }
    return Optional.of(b);
  }

  public Optional<List<String>> optionalStringList(String name) {
    Object value = fields.get(name);
    if (value == null) {
      return Optional.empty();
    }
    if (!(value instanceof List<?> list)) {
      throw HttpError.unprocessable(
          "field '" + name + "' must be a list of strings, got " + typeName(value));
    }
    List<String> strings = new ArrayList<>(list.size());
    for (Object item : list) {
      if (!(item instanceof String s)) {
        throw HttpError.unprocessable("field '" + name + "' must contain only strings");
      }
      strings.add(s);
    }
    return Optional.of(strings);
  }

  public Optional<Map<String, String>> optionalStringMap(String name) {
    Object value = fields.get(name);
    if (value == null) {
      return Optional.empty();
    }
    if (!(value instanceof Map<?, ?> map)) {
      throw HttpError.unprocessable(
          "field '" + name + "' must be an object of strings, got " + typeName(value));
    }
    Map<String, String> strings = new java.util.LinkedHashMap<>();
    for (Map.Entry<?, ?> e : map.entrySet()) {
      if (!(e.getValue() instanceof String s)) {
        throw HttpError.unprocessable("field '" + name + "' must map names to strings");
      }
      strings.put((String) e.getKey(), s);
    }
    return Optional.of(strings);
  }

  private static String typeName(Object value) {
    return switch (value) {
      case String s -> "a string";
      case Boolean b -> "a boolean";
      case Number n -> "a number";
      case List<?> l -> "a list";
      case Map<?, ?> m -> "an object";
      default -> value.getClass().getSimpleName();
    };
  }
}
