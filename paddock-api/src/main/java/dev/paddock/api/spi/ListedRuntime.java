package dev.paddock.api.spi;

import java.util.Objects;

/**
 * A runtime found by {@link SandboxBackend#listWithState()}, with what it was doing then.
 *
 * @param handle how to find it again
 * @param state its live state at the time of the listing
 */
public record ListedRuntime(RuntimeHandle handle, RuntimeState state) {
  public ListedRuntime {
    Objects.requireNonNull(handle, "handle");
    Objects.requireNonNull(state, "state");
  }
}
