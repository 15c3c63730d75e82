package dev.paddock.backend.docker;

import dev.paddock.api.spi.RuntimeFailure.Kind;
import dev.paddock.backend.docker.DockerEngine.Response;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.UnaryOperator;

/**
 * Replaces a sandbox's stopped container with a new one made from the old one's recorded
 * configuration, on the same workspace volume. Needed because a container's standard input cannot
 * be trusted across starts: once a start failed (a bind source missing, the runtime refusing), the
 * attach stream of that attempt has closed the container's input, and the next start's agent reads
 * end-of-file instead of its key digests ("secrets were to be given but none arrived"). A new
 * container always has a fresh input. The new one is made before the old one is removed (under a
 * temporary name, then renamed), so a refused create leaves the sandbox as it was.
 */
final class ContainerRecreation {
  private final Containers containers;

  ContainerRecreation(Containers containers) {
    this.containers = containers;
  }

  /**
   * The id of the new container, created (not started) from {@code container}'s configuration as
   * {@code edit} changes the create body; the old container is removed.
   *
   * @throws dev.paddock.api.spi.RuntimeStartException GONE when the container no longer exists,
   *     ENGINE_UNREACHABLE or UNKNOWN when the engine refuses
   */
  String recreate(String sandboxId, String container, UnaryOperator<Map<String, Object>> edit) {
    Response inspected = containers.engine().get("/containers/" + container + "/json");
    if (inspected.status() == 404) {
      throw DockerBackend.failure(
          DockerBackend.GONE, "container " + container + " of " + sandboxId + " is gone");
    }
    if (!inspected.ok()) {
      throw DockerBackend.failure(
          Kind.ENGINE_UNREACHABLE, "inspect of " + container + ": " + inspected.message());
    }
    String name = ContainerSpec.containerName(sandboxId);
    Response created =
        containers
            .engine()
            .post(
                "/containers/create?name="
                    + URLEncoder.encode(name + "-next", StandardCharsets.UTF_8),
                edit.apply(createBody(inspected.json())));
    if (!created.ok()) {
      throw DockerBackend.failure(Kind.UNKNOWN, "re-create refused: " + created.message());
    }
    String id = String.valueOf(created.json().get("Id"));
    containers.remove(container); // the workspace is a named volume: it stays
    containers.rename(id, name);
    return id;
  }

  /** The create body of a container as the engine recorded it: its config and host config. */
  static Map<String, Object> createBody(Map<String, Object> inspect) {
    Map<String, Object> body = new LinkedHashMap<>(ContainerState.map(inspect.get("Config")));
    body.put("HostConfig", inspect.get("HostConfig"));
    return body;
  }
}
