package dev.paddock.backend.docker;

import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.backend.kit.protocol.AliveProbe;
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
    String id =
        new ContainerRecreation(containers)
            .recreate(
                handle.sandboxId(),
                DockerHandles.container(handle),
                body -> ImageAgentRelaunch.recreated(body, sessionKey));
    try {
      return starts.launchImageAgent(handle.sandboxId(), id, probe);
    } catch (RuntimeException e) {
      containers.stop(id); // keep it (and its volume) for a later resume; never with an old key
      throw e;
    }
  }

  // The recorded create body with only what such an image needs, and the new key.
  private static Map<String, Object> recreated(Map<String, Object> recorded, String key) {
    Map<String, Object> body = new LinkedHashMap<>();
    for (String field :
        List.of("Image", "Entrypoint", "Cmd", "Labels", "User", "WorkingDir", "ExposedPorts")) {
      if (recorded.get(field) != null) {
        body.put(field, recorded.get(field));
      }
    }
    List<String> env =
        recorded.get("Env") instanceof List<?> list
            ? list.stream().map(String::valueOf).toList()
            : List.of();
    body.put("Env", AgentServerLaunch.withKey(env, key));
    body.put("Tty", false);
    body.put("HostConfig", recorded.get("HostConfig"));
    return body;
  }
}
