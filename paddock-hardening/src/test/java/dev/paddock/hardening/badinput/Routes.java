package dev.paddock.hardening.badinput;

import dev.paddock.http.Json;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Every route a server documents, read from its own OpenAPI document on the class path, so a route
 * added later (and documented, as {@code OpenApiTest} and the control plane's docs test demand) is
 * fired at without touching the suite.
 */
final class Routes {
  private static final Pattern PARAM = Pattern.compile("\\{([^}]+)}");
  private static final List<String> METHODS = List.of("get", "post", "put", "patch", "delete");

  private Routes() {}

  /** How a route takes its body. */
  enum Body {
    NONE,
    JSON_OBJECT,
    JSON_ARRAY,
    OCTETS,
    MULTIPART,
    TAR
  }

  /**
   * One documented operation.
   *
   * @param fields the JSON body's documented fields (empty for other bodies)
   * @param secured whether a key is required (the document's {@code security} is not empty)
   */
  record Operation(
      String method,
      String template,
      List<String> pathParams,
      List<String> queryParams,
      Body body,
      List<String> fields,
      boolean secured) {

    /** Whether the path names a sandbox by {@code {id}} (control plane) as its first parameter. */
    boolean namesSandbox() {
      return template.startsWith("/api/v1/sandboxes/{id}");
    }

    /** Whether it names a user by {@code {id}}. */
    boolean namesUser() {
      return template.startsWith("/api/v1/users/{id}");
    }

    @Override
    public String toString() {
      return method + " " + template;
    }
  }

  /** The operations of the OpenAPI document at {@code resource}. */
  static List<Operation> of(String resource) {
    Map<String, Object> doc = document(resource);
    Map<String, Object> components = map(doc.getOrDefault("components", Map.of()));
    List<Operation> operations = new ArrayList<>();
    for (var path : map(doc.get("paths")).entrySet()) {
      Map<String, Object> item = map(path.getValue());
      for (String method : METHODS) {
        if (item.containsKey(method)) {
          operations.add(operation(method, path.getKey(), item, map(item.get(method)), components));
        }
      }
    }
    return List.copyOf(operations);
  }

  private static Operation operation(
      String method,
      String template,
      Map<String, Object> item,
      Map<String, Object> op,
      Map<String, Object> components) {
    List<String> pathParams = new ArrayList<>();
    Matcher m = PARAM.matcher(template);
    while (m.find()) {
      pathParams.add(m.group(1));
    }
    List<String> query = new ArrayList<>();
    List<Object> params = new ArrayList<>(list(item.getOrDefault("parameters", List.of())));
    params.addAll(list(op.getOrDefault("parameters", List.of())));
    for (Object p : params) {
      Map<String, Object> param = resolve(map(p), components);
      if ("query".equals(param.get("in"))) {
        query.add((String) param.get("name"));
      }
    }
    Body body = Body.NONE;
    List<String> fields = List.of();
    Map<String, Object> content =
        map(map(op.getOrDefault("requestBody", Map.of())).getOrDefault("content", Map.of()));
    for (var entry : content.entrySet()) {
      String type = entry.getKey().toLowerCase(Locale.ROOT);
      Map<String, Object> schema =
          resolve(map(map(entry.getValue()).getOrDefault("schema", Map.of())), components);
      if (type.contains("json")) {
        body = "array".equals(schema.get("type")) ? Body.JSON_ARRAY : Body.JSON_OBJECT;
        fields = List.copyOf(map(schema.getOrDefault("properties", Map.of())).keySet());
      } else if (type.contains("multipart")) {
        body = Body.MULTIPART;
      } else if (type.contains("tar")) {
        body = Body.TAR;
      } else {
        body = Body.OCTETS;
      }
    }
    boolean secured = !list(op.getOrDefault("security", List.of())).isEmpty();
    return new Operation(
        method.toUpperCase(Locale.ROOT),
        template,
        List.copyOf(pathParams),
        List.copyOf(query),
        body,
        fields,
        secured);
  }

  private static Map<String, Object> resolve(
      Map<String, Object> node, Map<String, Object> components) {
    Object ref = node.get("$ref");
    if (!(ref instanceof String r)) {
      return node;
    }
    String[] parts = r.substring("#/components/".length()).split("/");
    return map(map(components.get(parts[0])).get(parts[1]));
  }

  private static Map<String, Object> document(String resource) {
    try (InputStream in = Routes.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException("no " + resource + " on the class path");
      }
      return Json.parseObject(in.readAllBytes());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object value) {
    return value instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
  }

  @SuppressWarnings("unchecked")
  private static List<Object> list(Object value) {
    return value instanceof List<?> l ? (List<Object>) l : List.of();
  }
}
