package dev.paddock.backend.docker;

import dev.paddock.api.SandboxException;
import dev.paddock.backend.docker.DockerEngine.EngineException;
import dev.paddock.backend.docker.DockerEngine.Response;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The engine calls on containers and their workspace volumes, typed: inspect answers a {@link
 * ContainerState}, pause and unpause retry through {@link EngineRetry}, removal thaws and stops
 * first. Thread-safe (no state beyond the engine client).
 */
final class Containers {
  private static final System.Logger LOG = System.getLogger("paddock.backend.docker");

  private final DockerEngine engine;
  private final Duration stopGrace;

  Containers(DockerEngine engine, Duration stopGrace) {
    this.engine = engine;
    this.stopGrace = stopGrace;
  }

  DockerEngine engine() {
    return engine;
  }

  /** The container now; empty when it does not exist. */
  Optional<ContainerState> inspect(String container) {
    Response response = engine.get("/containers/" + container + "/json");
    if (response.status() == 404) {
      return Optional.empty();
    }
    if (!response.ok()) {
      throw new EngineException(
          "inspect of " + container + ": " + response.status() + " " + response.message(), null);
    }
    return Optional.of(ContainerState.parse(response.json()));
  }

  String statusOf(String container) {
    return inspect(container).map(ContainerState::status).orElse("missing");
  }

  /** Freezes it; done when it is paused. */
  void pause(String container, String sandboxId) {
    retrying(container, "pause", "paused", sandboxId);
  }

  /** Thaws it; done when it runs. */
  void unpause(String container, String sandboxId) {
    retrying(container, "unpause", "running", sandboxId);
  }

  private void retrying(String container, String call, String target, String sandboxId) {
    boolean done =
        EngineRetry.until(
            () -> {
              Response answer = post("/containers/" + container + "/" + call);
              return answer.ok() || reached(container, target, sandboxId, answer);
            });
    if (!done) {
      throw new SandboxException(
          "The container engine would not " + call + " sandbox " + sandboxId + "; try again.",
          Optional.of(sandboxId));
    }
  }

  private boolean reached(String container, String target, String sandboxId, Response answer) {
    String status = statusOf(container);
    if (status.equals(target)) {
      return true;
    }
    if (!status.equals("running") && !status.equals("paused")) {
      throw new SandboxException(
          "Sandbox " + sandboxId + " is not running, so it cannot be " + target + ".",
          Optional.of(sandboxId));
    }
    LOG.log(
        System.Logger.Level.DEBUG,
        "{0} of {1} answered {2} ({3}); retrying",
        target,
        container,
        answer.status(),
        answer.message());
    return false;
  }

  /** Stops it (SIGTERM, the grace, SIGKILL); a stopped one stays stopped. Idempotent. */
  void stop(String container) {
    Response answer =
        engine.call(
            "POST",
            "/containers/" + container + "/stop?t=" + stopGrace.toSeconds(),
            new byte[0],
            null,
            stopGrace.plusSeconds(60));
    if (!answer.ok() && answer.status() != 304 && answer.status() != 404) {
      throw new EngineException(
          "stop of " + container + ": " + answer.status() + " " + answer.message(), null);
    }
  }

  /** Renames it (idempotent: a container that has the name already keeps it). */
  void rename(String container, String name) {
    Response answer =
        engine.post(
            "/containers/"
                + container
                + "/rename?name="
                + java.net.URLEncoder.encode(name, java.nio.charset.StandardCharsets.UTF_8),
            null);
    if (!answer.ok() && answer.status() != 409) {
      throw new EngineException(
          "rename of " + container + ": " + answer.status() + " " + answer.message(), null);
    }
  }

  /** Stops (thawing a frozen one first, so it can take SIGTERM) and removes it. Idempotent. */
  void remove(String container) {
    Optional<ContainerState> state = inspect(container);
    if (state.isEmpty()) {
      return;
    }
    if (state.get().is("paused")) {
      EngineRetry.until(
          () ->
              post("/containers/" + container + "/unpause").ok()
                  || !statusOf(container).equals("paused"));
    }
    if (state.get().alive()) {
      engine.call(
          "POST",
          "/containers/" + container + "/stop?t=" + stopGrace.toSeconds(),
          new byte[0],
          null,
          stopGrace.plusSeconds(60));
    }
    // 409: a removal is already under way; wait for it to finish.
    boolean removed =
        EngineRetry.until(
            () -> {
              Response answer = engine.delete("/containers/" + container + "?v=1&force=1");
              return answer.ok() || answer.status() == 404;
            });
    if (!removed) {
      throw new IllegalStateException("container " + container + " could not be removed");
    }
  }

  /** Creates a labelled volume (idempotent: an existing one of that name is kept). */
  void createVolume(String name, Map<String, String> labels) {
    Response created = engine.post("/volumes/create", Map.of("Name", name, "Labels", labels));
    if (!created.ok()) {
      throw new EngineException("volume create of " + name + ": " + created.message(), null);
    }
  }

  /** Removes a volume; retried while a container that used it is still being removed. */
  void removeVolume(String name) {
    boolean removed =
        EngineRetry.until(
            () -> {
              Response answer = engine.delete("/volumes/" + name);
              return answer.ok() || answer.status() == 404;
            });
    if (!removed) {
      throw new IllegalStateException("volume " + name + " could not be removed");
    }
  }

  /** Summaries ({@code docker ps -a}) of the containers carrying every label given. */
  List<Map<String, Object>> listContainers(List<String> labels) {
    Response response = engine.get("/containers/json?all=1&filters=" + labelFilter(labels));
    if (!response.ok()) {
      throw new IllegalStateException("container list: " + response.message());
    }
    return response.jsonList();
  }

  /** Summaries ({@code docker volume ls}) of the volumes carrying every label given. */
  @SuppressWarnings("unchecked")
  List<Map<String, Object>> listVolumes(List<String> labels) {
    Response response = engine.get("/volumes?filters=" + labelFilter(labels));
    if (!response.ok()) {
      throw new IllegalStateException("volume list: " + response.message());
    }
    Object volumes = response.json().get("Volumes");
    return volumes instanceof List<?> list ? (List<Map<String, Object>>) list : List.of();
  }

  Response post(String path) {
    return engine.call("POST", path, new byte[0], null);
  }

  private static String labelFilter(List<String> labels) {
    StringBuilder json = new StringBuilder("{\"label\":[");
    for (int i = 0; i < labels.size(); i++) {
      json.append(i == 0 ? "\"" : ",\"").append(labels.get(i)).append('"');
    }
    return URLEncoder.encode(json.append("]}").toString(), StandardCharsets.UTF_8);
  }
}
