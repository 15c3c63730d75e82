package dev.paddock.controlplane;

import dev.paddock.api.KeyDigest;
import dev.paddock.api.spi.AgentCallException;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.SandboxAgent;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The keys of sandboxes' agents: deriving session and admin keys (see {@link SessionKeys}), and
 * telling a running agent which session keys to accept (rotate) or to accept none (revoke).
 * Thread-safe.
 */
final class AgentKeys {
  private static final Logger LOG = LoggerFactory.getLogger(AgentKeys.class);

  private final SessionKeys keys;
  private final SandboxAgents agents;

  AgentKeys(SessionKeys keys, SandboxAgents agents) {
    this.keys = keys;
    this.agents = agents;
  }

  long firstGeneration() {
    return keys.firstGeneration();
  }

  /** The session key of a sandbox at a generation (derived, never stored). */
  String sessionKey(String sandboxId, long generation) {
    return keys.sessionKey(sandboxId, generation);
  }

  String adminKey(String sandboxId) {
    return keys.adminKey(sandboxId);
  }

  String adminDigest(String sandboxId) {
    return KeyDigest.sha256Hex(keys.adminKey(sandboxId));
  }

  /** The agent of a RUNNING runtime (through the backend's seam); empty when not answering. */
  Optional<SandboxAgent> agent(RuntimeHandle handle) {
    return agents.of(handle);
  }

  /**
   * Makes the runtime's agent accept exactly the keys with these digests.
   *
   * @throws AgentCallException when it cannot be reached or refuses
   * @throws IllegalStateException when the runtime exposes no agent
   */
  void rotate(RuntimeHandle handle, List<String> digests) {
    agent(handle)
        .orElseThrow(() -> new IllegalStateException("the runtime exposes no agent URL"))
        .replaceSessionKeys(digests);
  }

  /** Best effort: a frozen or dead agent cannot answer, and the store revocation holds anyway. */
  void revokeAtAgent(RuntimeHandle handle) {
    String id = handle.sandboxId();
    try {
      Optional<SandboxAgent> agent = agent(handle);
      if (agent.isPresent()) {
        agent.get().replaceSessionKeys(List.of());
      } else {
        LOG.debug("sandbox {}: agent not answering, key revoked in the store only", id);
      }
    } catch (RuntimeException e) {
      LOG.info("sandbox {}: could not revoke the key at the agent: {}", id, e.toString());
    }
  }
}
