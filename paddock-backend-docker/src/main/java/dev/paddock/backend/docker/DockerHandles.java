package dev.paddock.backend.docker;

import dev.paddock.api.ExposedUrl;
import dev.paddock.api.spi.RuntimeFailure.Kind;
import dev.paddock.api.spi.RuntimeHandle;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A sandbox's container as a {@link RuntimeHandle} and back: the attributes {@code container},
 * {@code volume}, {@code network}, {@code port} (the agent's port as this control plane reaches it)
 * and, in bridge mode, {@code workers} ({@code inside=outside,...}); and the URLs they expose.
 */
final class DockerHandles {
  static final String CONTAINER = "container";
  static final String VOLUME = "volume";
  static final String NETWORK = "network";
  static final String PORT = "port";
  static final String WORKERS = "workers";

  /** Of an image's own agent-server: {@code NAME=inside=outside,...} for every exposed URL. */
  static final String URLS = "urls";

  private final DockerSettings settings;

  DockerHandles(DockerSettings settings) {
    this.settings = settings;
  }

  /** The handle of a started container whose agent printed {@code readyPort}. */
  RuntimeHandle handle(String sandboxId, ContainerState state, int readyPort) {
    Map<String, String> attributes = base(sandboxId, state);
    if (state.label(AgentServerLaunch.LABEL_AGENT_SERVER).isPresent()) {
      return imageAgent(sandboxId, state, attributes);
    }
    if (state.hostNetwork()) {
      attributes.put(PORT, Integer.toString(readyPort));
    } else {
      Integer agent = state.publishedPorts().get(DockerSettings.AGENT_PORT);
      if (agent == null) {
        throw DockerBackend.failure(Kind.PORT_TAKEN, "the engine published no port for the agent");
      }
      attributes.put(PORT, Integer.toString(agent));
      attributes.put(WORKERS, workers(state));
    }
    return new RuntimeHandle(sandboxId, DockerBackend.NAME, attributes);
  }

  // The ports come from the label; with bridge networking each is published on a host port.
  private static RuntimeHandle imageAgent(
      String sandboxId, ContainerState state, Map<String, String> attributes) {
    Map<String, Integer> ports =
        AgentServerLaunch.parseLabel(state.label(AgentServerLaunch.LABEL_AGENT_PORTS).orElse(""));
    StringBuilder urls = new StringBuilder();
    int agent = 0;
    for (Map.Entry<String, Integer> port : ports.entrySet()) {
      int inside = port.getValue();
      Integer outside = state.hostNetwork() ? inside : state.publishedPorts().get(inside);
      if (outside == null) {
        continue; // not published (yet)
      }
      if (port.getKey().equals(ExposedUrl.AGENT_SERVER)) {
        agent = outside;
      }
      urls.append(urls.isEmpty() ? "" : ",").append(port.getKey()).append('=');
      urls.append(inside).append('=').append(outside);
    }
    attributes.put(PORT, Integer.toString(agent));
    attributes.put(URLS, urls.toString());
    attributes.put(RuntimeHandle.LAUNCH_KEYED, "true");
    return new RuntimeHandle(sandboxId, DockerBackend.NAME, attributes);
  }

  /** The handle of a container whose agent's port is not known (it is not answering). */
  RuntimeHandle portless(String sandboxId, ContainerState state) {
    Map<String, String> attributes = base(sandboxId, state);
    attributes.put(PORT, "0");
    return new RuntimeHandle(sandboxId, DockerBackend.NAME, attributes);
  }

  /** A workspace volume whose container is gone: destroy removes it. */
  static RuntimeHandle volumeOnly(String sandboxId, String volume) {
    return new RuntimeHandle(
        sandboxId,
        DockerBackend.NAME,
        Map.of(CONTAINER, ContainerSpec.containerName(sandboxId), VOLUME, volume, PORT, "0"));
  }

  private Map<String, String> base(String sandboxId, ContainerState state) {
    Map<String, String> attributes = new LinkedHashMap<>();
    attributes.put(CONTAINER, state.id());
    attributes.put(
        VOLUME,
        state.volumes().values().stream()
            .filter(v -> v.equals(ContainerSpec.volumeName(sandboxId)))
            .findFirst()
            .orElse(""));
    attributes.put(NETWORK, state.hostNetwork() ? "host" : "bridge");
    state
        .label(ContainerSpec.LABEL_UNENFORCED)
        .ifPresent(limits -> attributes.put(RuntimeHandle.UNENFORCED, limits));
    return attributes;
  }

  private String workers(ContainerState state) {
    StringBuilder workers = new StringBuilder();
    for (int port : settings.workerPorts()) {
      Integer hostPort = state.publishedPorts().get(port);
      if (hostPort != null) {
        workers.append(workers.isEmpty() ? "" : ",").append(port).append('=').append(hostPort);
      }
    }
    return workers.toString();
  }

  static String container(RuntimeHandle handle) {
    String container = handle.attributes().getOrDefault(CONTAINER, "");
    return container.isBlank() ? ContainerSpec.containerName(handle.sandboxId()) : container;
  }

  /** The workspace volume; handles from before volumes were named have none. */
  static String volume(RuntimeHandle handle) {
    return handle.attributes().getOrDefault(VOLUME, "");
  }

  static int port(RuntimeHandle handle) {
    return Integer.parseInt(handle.attributes().getOrDefault(PORT, "0"));
  }

  /** Where this control plane reaches published ports: loopback unless bound elsewhere. */
  String probeHost() {
    String bind = settings.bindAddress();
    return settings.hostNetwork() || bind.equals("0.0.0.0") || bind.isBlank() ? "127.0.0.1" : bind;
  }

  List<ExposedUrl> urls(RuntimeHandle handle) {
    if (handle.launchKeyed()) {
      return imageAgentUrls(handle);
    }
    int port = port(handle);
    boolean host = "host".equals(handle.attributes().get(NETWORK));
    List<ExposedUrl> urls = new ArrayList<>();
    urls.add(
        new ExposedUrl(
            ExposedUrl.AGENT_SERVER, settings.url(port), host ? port : DockerSettings.AGENT_PORT));
    int n = 1;
    for (String pair : handle.attributes().getOrDefault(WORKERS, "").split(",")) {
      int eq = pair.indexOf('=');
      if (eq > 0) {
        int inside = Integer.parseInt(pair.substring(0, eq));
        int outside = Integer.parseInt(pair.substring(eq + 1));
        urls.add(new ExposedUrl("WORKER_" + n++, settings.url(outside), inside));
      }
    }
    return urls;
  }

  private List<ExposedUrl> imageAgentUrls(RuntimeHandle handle) {
    List<ExposedUrl> urls = new ArrayList<>();
    for (String entry : handle.attributes().getOrDefault(URLS, "").split(",")) {
      String[] parts = entry.split("=");
      if (parts.length == 3) {
        int outside = Integer.parseInt(parts[2]);
        urls.add(new ExposedUrl(parts[0], settings.url(outside), Integer.parseInt(parts[1])));
      }
    }
    return urls;
  }
}
