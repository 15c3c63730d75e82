package dev.paddock.controlplane;

import com.fasterxml.jackson.jr.ob.JSON;
import dev.paddock.api.SandboxSpec;
import dev.paddock.api.settings.Setting;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * Variables forwarded from the control plane's host into every sandbox, as OpenHands does: every
 * setting whose name starts with {@code LLM_} or {@code LMNR_}, then the JSON object in {@value
 * #JSON_SETTING}, whose entries win. Applied over a spec's own environment, so a spec's defaults
 * are overridden by what the operator forwards. Immutable; build once at start-up so a malformed
 * JSON setting fails there, not at the first sandbox.
 */
public final class ForwardedEnvironment {
  /** The setting holding a JSON object of extra variables (string, number or boolean values). */
  public static final String JSON_SETTING = "OH_AGENT_SERVER_ENV";

  /** What is forwarded, for help and {@code paddock config} (values are secrets: API keys). */
  public static final List<Setting<?>> SETTINGS =
      List.of(
          Setting.family("LLM_", "forwarded into every sandbox (LLM_<NAME>)").secret(),
          Setting.family("LMNR_", "forwarded into every sandbox (LMNR_<NAME>)").secret(),
          Setting.string(JSON_SETTING, "a JSON object of more variables to forward").secret());

  private static final ForwardedEnvironment NONE = new ForwardedEnvironment(Map.of());

  private final Map<String, String> variables;

  private ForwardedEnvironment(Map<String, String> variables) {
    this.variables = Map.copyOf(variables);
  }

  /** Forwards nothing. */
  public static ForwardedEnvironment none() {
    return NONE;
  }

  /**
   * The variables to forward, read from {@code settings} (the host environment and config file,
   * flattened).
   *
   * @throws IllegalArgumentException when {@value #JSON_SETTING} is not a JSON object of scalars
   */
  public static ForwardedEnvironment fromSettings(Map<String, String> settings) {
    Map<String, String> forwarded = new TreeMap<>();
    settings.forEach(
        (name, value) -> {
          if (name.startsWith("LLM_") || name.startsWith("LMNR_")) {
            forwarded.put(name, value);
          }
        });
    String json = settings.get(JSON_SETTING);
    if (json != null && !json.isBlank()) {
      forwarded.putAll(parseObject(json));
    }
    return new ForwardedEnvironment(forwarded);
  }

  /** The forwarded variables. */
  public Map<String, String> variables() {
    return variables;
  }

  /** {@code spec} with the forwarded variables merged over its own environment. */
  public SandboxSpec applyTo(SandboxSpec spec) {
    if (variables.isEmpty()) {
      return spec;
    }
    return spec.toBuilder().env(variables).build();
  }

  private static Map<String, String> parseObject(String json) {
    Object parsed;
    try {
      parsed = JSON.std.anyFrom(json);
    } catch (IOException e) {
      throw invalid("it is not valid JSON (" + e.getMessage().lines().findFirst().orElse("") + ")");
    }
    if (!(parsed instanceof Map<?, ?> map)) {
      throw invalid("it must be a JSON object");
    }
    Map<String, String> result = new TreeMap<>();
    map.forEach(
        (name, value) -> {
          if (!(value instanceof String || value instanceof Number || value instanceof Boolean)) {
            throw invalid("the value of '" + name + "' must be a string, number or boolean");
          }
          result.put(Objects.toString(name), value.toString());
        });
    return result;
  }

  // The message never echoes the setting's value: it may hold API keys.
  private static IllegalArgumentException invalid(String why) {
    return new IllegalArgumentException(
        "setting "
            + JSON_SETTING
            + " is invalid: "
            + why
            + "; expected e.g. {\"NAME\": \"value\"}");
  }
}
