package dev.paddock.backend.docker;

import dev.paddock.api.SandboxSpec;
import dev.paddock.api.spi.RuntimeFailure.Kind;
import dev.paddock.api.spi.RuntimeRequest;
import dev.paddock.api.spi.RuntimeStartException;
import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * OpenHands' launch contract, for an image that brings its own agent-server ({@link
 * SandboxSpec.AgentServer#IMAGE}): the image's entry point runs unchanged and is configured only
 * through environment variables, {@code OH_SESSION_API_KEYS_0} (the plaintext session key: the one
 * place a key enters a container's environment, because that is the contract), {@code
 * OH_WEBHOOKS_0_BASE_URL} and {@code OH_ALLOW_CORS_ORIGINS_0} (from {@code docker.callback-url}),
 * and the ports as {@code AGENT_SERVER}, {@code VSCODE}, {@code WORKER_1}, {@code WORKER_2}.
 *
 * <p>Ports: in bridge mode the container ports are OpenHands' fixed 8000, 8001, 8011 and 8012, each
 * published on a host port the engine picks. With host networking there is no mapping, so the ports
 * are the sandbox's own {@code AGENT_SERVER}, {@code VSCODE}, {@code WORKER_1}, {@code WORKER_2}
 * variables when it sets them (from the spec or the create's env), else the fixed ones; the chosen
 * ports are kept in the label {@code paddock.agent-ports} ({@code NAME=port,...}).
 */
final class AgentServerLaunch {
  static final String LABEL_AGENT_SERVER = "paddock.agent-server";
  static final String LABEL_AGENT_PORTS = "paddock.agent-ports";
  static final String IMAGE = "image";
  static final String KEY_VARIABLE = "OH_SESSION_API_KEYS_0";

  /** The exposed URL names and OpenHands' container ports, in order. */
  static final Map<String, Integer> PORTS =
      orderedPorts("AGENT_SERVER", 8000, "VSCODE", 8001, "WORKER_1", 8011, "WORKER_2", 8012);

  private AgentServerLaunch() {}

  static boolean applies(SandboxSpec spec) {
    return spec.agentServer() == SandboxSpec.AgentServer.IMAGE;
  }

  /** The ports by exposed URL name, as the agent inside binds them. */
  static Map<String, Integer> ports(Map<String, String> env, boolean hostNetwork) {
    if (!hostNetwork) {
      return PORTS;
    }
    Map<String, Integer> ports = new LinkedHashMap<>();
    PORTS.forEach((name, fixed) -> ports.put(name, port(name, env.getOrDefault(name, ""), fixed)));
    return ports;
  }

  private static int port(String name, String value, int fixed) {
    if (value.isBlank()) {
      return fixed;
    }
    try {
      int port = Integer.parseInt(value.strip());
      if (port >= 1 && port <= 65535) {
        return port;
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    throw DockerBackend.failure(
        Kind.IMAGE_UNSUITABLE, name + "='" + value + "' is not a port number (1-65535)");
  }

  /** The sandbox's variables with the contract's over them (the contract's always win). */
  static List<String> env(
      RuntimeRequest request, Map<String, Integer> ports, DockerSettings settings) {
    Map<String, String> variables = new LinkedHashMap<>(request.spec().initialEnv());
    variables.putAll(request.env());
    String key =
        request
            .launchSessionKey()
            .orElseThrow(
                () ->
                    new RuntimeStartException(
                        new dev.paddock.api.spi.RuntimeFailure(
                            Kind.UNKNOWN, "no launch key for an image agent-server")));
    variables.put(KEY_VARIABLE, key);
    settings
        .callbackUrl()
        .ifPresent(
            url -> {
              variables.put("OH_WEBHOOKS_0_BASE_URL", stripSlash(url) + "/api/v1/webhooks");
              variables.put("OH_ALLOW_CORS_ORIGINS_0", origin(url));
            });
    ports.forEach((name, port) -> variables.put(name, Integer.toString(port)));
    variables.put("PADDOCK_MANAGED", "true");
    variables.put("PADDOCK_SANDBOX_ID", request.sandboxId());
    List<String> env = new ArrayList<>();
    variables.forEach((k, v) -> env.add(k + "=" + v));
    return env;
  }

  /** The label value of these ports: {@code NAME=port,...}. */
  static String label(Map<String, Integer> ports) {
    StringBuilder label = new StringBuilder();
    ports.forEach(
        (name, port) ->
            label.append(label.isEmpty() ? "" : ",").append(name).append('=').append(port));
    return label.toString();
  }

  /** The ports of a label written by {@link #label}; unparsable entries are left out. */
  static Map<String, Integer> parseLabel(String label) {
    Map<String, Integer> ports = new LinkedHashMap<>();
    for (String pair : label.split(",")) {
      int eq = pair.indexOf('=');
      if (eq > 0) {
        try {
          ports.put(pair.substring(0, eq), Integer.parseInt(pair.substring(eq + 1)));
        } catch (NumberFormatException e) {
          // not ours
        }
      }
    }
    return ports;
  }

  /** The container env with its session key replaced (a relaunch after pause). */
  static List<String> withKey(List<String> env, String key) {
    List<String> replaced = new ArrayList<>();
    for (String entry : env) {
      if (!entry.startsWith(KEY_VARIABLE + "=")) {
        replaced.add(entry);
      }
    }
    replaced.add(KEY_VARIABLE + "=" + key);
    return replaced;
  }

  private static String stripSlash(String url) {
    return url.endsWith("/") ? url.substring(0, url.length() - 1) : url;
  }

  private static String origin(String url) {
    URI uri = URI.create(url);
    return uri.getScheme() + "://" + uri.getAuthority();
  }

  private static Map<String, Integer> orderedPorts(Object... pairs) {
    Map<String, Integer> ports = new LinkedHashMap<>();
    for (int i = 0; i < pairs.length; i += 2) {
      ports.put((String) pairs[i], (Integer) pairs[i + 1]);
    }
    return java.util.Collections.unmodifiableMap(ports);
  }
}
