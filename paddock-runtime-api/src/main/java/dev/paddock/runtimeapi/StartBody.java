package dev.paddock.runtimeapi;

import dev.paddock.api.Resources;
import dev.paddock.backend.kit.protocol.AgentSecrets;
import dev.paddock.http.HttpError;
import dev.paddock.http.JsonBody;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.OptionalLong;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A {@code POST /start} body: OpenHands' fields (image, command, working_dir, environment,
 * session_id, resource_factor, run_as_user, run_as_group, fs_group, runtime_class,
 * image_pull_policy) and Paddock's ({@code paddock_*}: the control plane's key digests, its tag,
 * the spec's command, working directory and limits). OpenHands' {@code command}, {@code
 * working_dir} and user fields name OpenHands' agent-server inside its image; Paddock runs its own
 * agent as the local spec says, so they are checked and recorded but not applied.
 */
record StartBody(
    String image,
    String sessionId,
    Map<String, String> environment,
    int resourceFactor,
    Optional<List<String>> sessionKeyDigests,
    Optional<String> adminKeyDigest,
    Optional<String> client,
    Optional<List<String>> command,
    Optional<String> workingDir,
    Resources resources) {
  private static final Pattern SESSION_ID = Pattern.compile("[A-Za-z0-9][A-Za-z0-9_.-]{0,127}");
  private static final Pattern CLIENT = Pattern.compile("[A-Za-z0-9_.-]{1,64}");
  private static final Set<String> FIELDS =
      Set.of(
          "image",
          "command",
          "working_dir",
          "environment",
          "session_id",
          "resource_factor",
          "run_as_user",
          "run_as_group",
          "fs_group",
          "runtime_class",
          "image_pull_policy",
          "paddock_session_key_sha256",
          "paddock_admin_key_sha256",
          "paddock_client",
          "paddock_command",
          "paddock_working_dir",
          "paddock_resources");

  static Set<String> fields() {
    return FIELDS;
  }

  /**
   * @throws HttpError 422 naming the field that is wrong
   */
  static StartBody parse(JsonBody body, Object rawCommand, Object rawResources) {
    String sessionId = body.requiredString("session_id");
    if (!SESSION_ID.matcher(sessionId).matches()) {
      throw HttpError.unprocessable(
          "field 'session_id' must be 1-128 letters, digits, '_', '.' or '-', starting with a"
              + " letter or digit");
    }
    checkOpenHandsCommand(rawCommand);
    body.optionalString("working_dir");
    body.optionalString("runtime_class");
    body.optionalString("image_pull_policy");
    for (String id : List.of("run_as_user", "run_as_group", "fs_group")) {
      body.optionalLong(id, 0, Integer.MAX_VALUE);
    }
    long factor = body.optionalLong("resource_factor", 1, 8).orElse(1L);
    if (Long.bitCount(factor) != 1) {
      throw HttpError.unprocessable("field 'resource_factor' must be 1, 2, 4 or 8, got " + factor);
    }
    return new StartBody(
        body.requiredString("image"),
        sessionId,
        body.optionalStringMap("environment").orElse(Map.of()),
        (int) factor,
        body.optionalStringList("paddock_session_key_sha256").map(StartBody::digests),
        body.optionalString("paddock_admin_key_sha256").map(StartBody::digest),
        body.optionalString("paddock_client").map(StartBody::client),
        body.optionalStringList("paddock_command"),
        body.optionalString("paddock_working_dir"),
        resources(rawResources));
  }

  /** The caller keys the agent itself: it sent the digests the agent must accept. */
  boolean callerKeyed() {
    return sessionKeyDigests.isPresent();
  }

  private static void checkOpenHandsCommand(Object command) {
    boolean ok =
        command == null
            || command instanceof String
            || (command instanceof List<?> list
                && list.stream().allMatch(String.class::isInstance));
    if (!ok) {
      throw HttpError.unprocessable("field 'command' must be a string or a list of strings");
    }
  }

  private static List<String> digests(List<String> digests) {
    digests.forEach(StartBody::digest);
    return digests;
  }

  private static String digest(String digest) {
    try {
      return AgentSecrets.checkedDigest(digest);
    } catch (IllegalArgumentException e) {
      throw HttpError.unprocessable("paddock key digests must be 64 hex digits (SHA-256)");
    }
  }

  private static String client(String client) {
    if (!CLIENT.matcher(client).matches()) {
      throw HttpError.unprocessable(
          "field 'paddock_client' must be 1-64 letters, digits, '_', '.' or '-'");
    }
    return client;
  }

  private static Resources resources(Object raw) {
    if (raw == null) {
      return Resources.NONE;
    }
    if (!(raw instanceof Map<?, ?> map)) {
      throw HttpError.unprocessable("field 'paddock_resources' must be an object");
    }
    for (Object key : map.keySet()) {
      if (!Set.of("cpus", "memory", "pids", "disk").contains(key)) {
        throw HttpError.unprocessable(
            "field 'paddock_resources' has unknown limit '"
                + key
                + "'; allowed: cpus, memory,"
                + " pids, disk");
      }
    }
    return new Resources(
        number(map.get("cpus"))
            .map(Number::doubleValue)
            .map(OptionalDouble::of)
            .orElse(OptionalDouble.empty()),
        number(map.get("memory"))
            .map(Number::longValue)
            .map(OptionalLong::of)
            .orElse(OptionalLong.empty()),
        number(map.get("pids"))
            .map(Number::intValue)
            .map(OptionalInt::of)
            .orElse(OptionalInt.empty()),
        number(map.get("disk"))
            .map(Number::longValue)
            .map(OptionalLong::of)
            .orElse(OptionalLong.empty()));
  }

  private static Optional<Number> number(Object value) {
    if (value == null) {
      return Optional.empty();
    }
    if (!(value instanceof Number n) || n.doubleValue() <= 0) {
      throw HttpError.unprocessable("each of 'paddock_resources' must be a positive number");
    }
    return Optional.of(n);
  }
}
