package dev.paddock.api.spi;

import java.util.Map;
import java.util.Objects;

/**
 * How a backend finds a runtime again: persisted by the control plane, so it survives restarts.
 *
 * @param sandboxId the sandbox
 * @param backend the backend's name
 * @param attributes backend-specific facts (pid and start time, container id, port, ...)
 */
public record RuntimeHandle(String sandboxId, String backend, Map<String, String> attributes) {
  public RuntimeHandle {
    Objects.requireNonNull(sandboxId, "sandboxId");
    Objects.requireNonNull(backend, "backend");
    attributes = Map.copyOf(attributes);
  }
}
