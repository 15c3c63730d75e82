package dev.paddock.backend.docker;

import dev.paddock.api.spi.RuntimeFailure.Kind;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.backend.docker.DockerEngine.Response;
import dev.paddock.backend.kit.protocol.AliveProbe;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Brings back a sandbox whose image brings its own agent-server: such an agent takes its session
 * key only from {@code OH_SESSION_API_KEYS_0} at launch, and a container's environment is fixed
 * when it is created, so the container is re-created from its own recorded configuration with only
 * the key replaced, on the same workspace volume. The old container (holding the old key) is
 * removed first, so the old key is refused at once.
 */
final class ImageAgentRelaunch {
  private final Containers containers;
  private final ContainerStart starts;
  private final AliveProbe probe;

  ImageAgentRelaunch(Containers containers, ContainerStart starts, AliveProbe probe) {
    this.containers = containers;
    this.starts = starts;
    this.probe = probe;
  }

  RuntimeHandle relaunch(RuntimeHandle handle, String sessionKey) {
    String container = DockerHandles.container(handle);
    Response inspected = containers.engine().get("/containers/" + container + "/json");
    if (inspected.status() == 404) {
      throw DockerBackend.failure(
          DockerBackend.GONE, "container " + container + " of " + handle.sandboxId() + " is gone");
    }
    if (!inspected.ok()) {
      throw DockerBackend.failure(
          Kind.ENGINE_UNREACHABLE, "inspect of " + container + ": " + inspected.message());
    }
    Map<String, Object> body = recreated(inspected.json(), sessionKey);
    containers.remove(container); // the workspace is a named volume: it stays
    String name = ContainerSpec.containerName(handle.sandboxId());
    Response created =
        containers
            .engine()
            .post(
                "/containers/create?name=" + URLEncoder.encode(name, StandardCharsets.UTF_8), body);
    if (!created.ok()) {
      throw DockerBackend.failure(Kind.UNKNOWN, "re-create refused: " + created.message());
    }
    String id = String.valueOf(created.json().get("Id"));
    try {
      return starts.launchImageAgent(handle.sandboxId(), id, probe);
    } catch (RuntimeException e) {
      containers.stop(id); // keep it (and its volume) for a later resume; never with an old key
      throw e;
    }
  }

  // The create body of the container as the engine recorded it, with the new key.
  private static Map<String, Object> recreated(Map<String, Object> inspect, String key) {
    Map<String, Object> config = ContainerState.map(inspect.get("Config"));
    Map<String, Object> body = new LinkedHashMap<>();
    for (String field :
        List.of("Image", "Entrypoint", "Cmd", "Labels", "User", "WorkingDir", "ExposedPorts")) {
      if (config.get(field) != null) {
        body.put(field, config.get(field));
      }
    }
    List<String> env =
        config.get("Env") instanceof List<?> list
            ? list.stream().map(String::valueOf).toList()
            : List.of();
    body.put("Env", AgentServerLaunch.withKey(env, key));
    body.put("Tty", false);
    body.put("HostConfig", inspect.get("HostConfig"));
    return body;
  }
}
