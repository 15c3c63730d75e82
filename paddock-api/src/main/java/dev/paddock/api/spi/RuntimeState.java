package dev.paddock.api.spi;

import dev.paddock.api.ExposedUrl;
import dev.paddock.api.SandboxStatus;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * What a runtime is doing, read from the runtime itself.
 *
 * @param status STARTING, RUNNING (agent answering), PAUSED, ERROR or MISSING
 * @param urls where its agent-server (and other ports) can be reached; empty unless RUNNING
 * @param failure why it is in ERROR, if it is
 */
public record RuntimeState(
    SandboxStatus status, List<ExposedUrl> urls, Optional<RuntimeFailure> failure) {
  public RuntimeState {
    Objects.requireNonNull(status, "status");
    urls = List.copyOf(urls);
    Objects.requireNonNull(failure, "failure");
  }

  public static RuntimeState missing() {
    return new RuntimeState(SandboxStatus.MISSING, List.of(), Optional.empty());
  }
}
