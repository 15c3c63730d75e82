package dev.paddock.controlplane;

import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.SandboxAgent;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.backend.kit.protocol.HttpAgents;
import dev.paddock.store.SandboxStore;
import java.util.Optional;

/**
 * How the control plane reaches a sandbox's agent: always through {@link SandboxBackend#agent},
 * offering the backend the standard HTTP route (the agent URL the runtime reports, the sandbox's
 * admin key), which the backend may use, replace or refuse. An agent that came with its image
 * ({@link RuntimeHandle#launchKeyed()}) knows no admin key: it is reached with the session key of
 * the record's current generation (derived, never stored), archives asked for the working
 * directory. Thread-safe.
 */
final class SandboxAgents {
  private final SandboxBackend backend;
  private final SandboxViews views;
  private final SessionKeys keys;
  private final HttpAgents http;
  private final SandboxStore store;

  SandboxAgents(
      SandboxBackend backend,
      SandboxViews views,
      SessionKeys keys,
      HttpAgents http,
      SandboxStore store) {
    this.store = store;
    this.backend = backend;
    this.views = views;
    this.keys = keys;
    this.http = http;
  }

  /** The agent of a runtime that is RUNNING and exposes an agent URL; empty otherwise. */
  Optional<SandboxAgent> of(RuntimeHandle handle) {
    return views.agentUrl(handle).map(url -> backend.agent(handle, direct(handle, url)));
  }

  private SandboxAgent direct(RuntimeHandle handle, String url) {
    String id = handle.sandboxId();
    if (!handle.launchKeyed()) {
      return http.at(url, keys.adminKey(id));
    }
    return store
        .find(id)
        .map(
            r ->
                http.launchKeyed(
                    url,
                    keys.sessionKey(id, r.keyGeneration()),
                    r.settings().workingDir().orElse("/workspace/project")))
        .orElseGet(() -> SandboxAgent.refusing("sandbox " + id + " has no record"));
  }
}
