package dev.paddock.controlplane;

import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.SandboxAgent;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.backend.kit.protocol.HttpAgents;
import java.util.Optional;

/**
 * How the control plane reaches a sandbox's agent: always through {@link SandboxBackend#agent},
 * offering the backend the standard HTTP route (the agent URL the runtime reports, the sandbox's
 * admin key), which the backend may use, replace or refuse. Thread-safe.
 */
final class SandboxAgents {
  private final SandboxBackend backend;
  private final SandboxViews views;
  private final SessionKeys keys;
  private final HttpAgents http;

  SandboxAgents(SandboxBackend backend, SandboxViews views, SessionKeys keys, HttpAgents http) {
    this.backend = backend;
    this.views = views;
    this.keys = keys;
    this.http = http;
  }

  /** The agent of a runtime that is RUNNING and exposes an agent URL; empty otherwise. */
  Optional<SandboxAgent> of(RuntimeHandle handle) {
    return views
        .agentUrl(handle)
        .map(url -> backend.agent(handle, http.at(url, keys.adminKey(handle.sandboxId()))));
  }
}
