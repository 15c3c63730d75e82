package dev.paddock.agent.edit;

import dev.paddock.http.HttpError;
import dev.paddock.http.Json;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The body of {@code POST /api/file/edit}: the arguments of an OpenHands {@code file_editor} (or
 * Anthropic {@code str_replace_editor}) tool call, as the model wrote them, plus Paddock's {@code
 * encoding}, {@code overwrite} and {@code max_output_chars}. Unknown fields are refused (422),
 * except {@code security_risk}, which OpenHands' tool calls carry and the editor has no use for.
 */
record EditRequest(
    String command,
    String path,
    Optional<String> fileText,
    Optional<String> oldStr,
    Optional<String> newStr,
    Optional<Long> insertLine,
    Optional<List<Long>> viewRange,
    Optional<String> encoding,
    boolean overwrite,
    int maxOutputChars) {

  static final List<String> COMMANDS =
      List.of("view", "create", "str_replace", "insert", "undo_edit");

  /** OpenHands' {@code MAX_RESPONSE_LEN_CHAR}: the text an agent sees is clipped after this. */
  static final int DEFAULT_MAX_OUTPUT_CHARS = 16_000;

  static final int MAX_OUTPUT_CHARS = 1_000_000;

  private static final Set<String> FIELDS =
      Set.of(
          "command",
          "path",
          "file_text",
          "old_str",
          "new_str",
          "insert_line",
          "view_range",
          "encoding",
          "overwrite",
          "max_output_chars",
          "security_risk");

  static EditRequest parse(byte[] body) {
    if (body.length == 0) {
      throw HttpError.unprocessable(
          "request body must be a JSON object such as {\"command\": \"view\", \"path\": \"/...\"}");
    }
    Map<String, Object> fields = Json.parseObject(body);
    Set<String> unknown = new TreeSet<>(fields.keySet());
    unknown.removeAll(FIELDS);
    if (!unknown.isEmpty()) {
      throw HttpError.unprocessable(
          "unknown field(s) " + unknown + "; allowed: " + new TreeSet<>(FIELDS));
    }
    String command = string(fields, "command").orElseThrow(() -> missing("command"));
    if (!COMMANDS.contains(command)) {
      throw HttpError.unprocessable(
          "Unrecognized command "
              + command
              + ". The allowed commands for the file editor are: "
              + String.join(", ", COMMANDS));
    }
    return new EditRequest(
        command,
        string(fields, "path").orElseThrow(() -> missing("path")),
        string(fields, "file_text"),
        string(fields, "old_str"),
        string(fields, "new_str"),
        integer(fields, "insert_line"),
        integers(fields, "view_range"),
        string(fields, "encoding"),
        bool(fields, "overwrite").orElse(false),
        integer(fields, "max_output_chars")
            .map(n -> Math.clamp(n, 1, MAX_OUTPUT_CHARS))
            .orElse(DEFAULT_MAX_OUTPUT_CHARS));
  }

  /** A parameter the command needs, with OpenHands' wording and a hint. */
  String required(Optional<String> value, String name, String hint) {
    return value.orElseThrow(() -> parameterMissing(name, hint));
  }

  HttpError parameterMissing(String name, String hint) {
    return HttpError.unprocessable(
        "Parameter `" + name + "` is required for command: " + command + ".\n\nHint: " + hint);
  }

  private static HttpError missing(String field) {
    return HttpError.unprocessable("field '" + field + "' is required");
  }

  private static Optional<String> string(Map<String, Object> fields, String name) {
    Object value = fields.get(name);
    if (value == null) {
      return Optional.empty();
    }
    if (value instanceof String s) {
      return Optional.of(s);
    }
    throw HttpError.unprocessable("field '" + name + "' must be a string");
  }

  private static Optional<Boolean> bool(Map<String, Object> fields, String name) {
    Object value = fields.get(name);
    if (value == null) {
      return Optional.empty();
    }
    if (value instanceof Boolean b) {
      return Optional.of(b);
    }
    throw HttpError.unprocessable("field '" + name + "' must be true or false");
  }

  private static Optional<Long> integer(Map<String, Object> fields, String name) {
    Object value = fields.get(name);
    return value == null ? Optional.empty() : Optional.of(asLong(value, name));
  }

  private static Optional<List<Long>> integers(Map<String, Object> fields, String name) {
    Object value = fields.get(name);
    if (value == null) {
      return Optional.empty();
    }
    if (!(value instanceof List<?> list)) {
      throw HttpError.unprocessable(
          "Invalid `" + name + "` parameter: " + value + ". It should be a list of two integers.");
    }
    List<Long> numbers = new ArrayList<>(list.size());
    for (Object item : list) {
      numbers.add(asLong(item, name));
    }
    return Optional.of(numbers);
  }

  private static long asLong(Object value, String name) {
    if (value instanceof Integer || value instanceof Long) {
      return ((Number) value).longValue();
    }
    if (value instanceof Double d && d == Math.rint(d) && Math.abs(d) < 1e15) {
      return d.longValue();
    }
    throw HttpError.unprocessable(
        "Invalid `" + name + "` parameter: " + value + ". It should be an integer.");
  }
}
