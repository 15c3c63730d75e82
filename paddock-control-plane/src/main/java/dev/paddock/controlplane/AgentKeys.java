package dev.paddock.controlplane;

import dev.paddock.api.KeyDigest;
import dev.paddock.api.spi.RuntimeHandle;
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
  private final AgentAdminClient agents;
  private final SandboxViews views;

  AgentKeys(SessionKeys keys, AgentAdminClient agents, SandboxViews views) {
    this.keys = keys;
    this.agents = agents;
    this.views = views;
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

  /**
   * Makes the agent at {@code url} accept exactly the keys with these digests.
   *
   * @throws AgentAdminClient.AgentRotationException when it cannot be reached or refuses
   */
  void rotate(String sandboxId, String url, List<String> digests) {
    agents.rotate(url, keys.adminKey(sandboxId), digests);
  }

  /** Best effort: a frozen or dead agent cannot answer, and the store revocation holds anyway. */
  void revokeAtAgent(RuntimeHandle handle) {
    String id = handle.sandboxId();
    try {
      Optional<String> url = views.agentUrl(handle);
      if (url.isPresent()) {
        rotate(id, url.get(), List.of());
      } else {
        LOG.debug("sandbox {}: agent not answering, key revoked in the store only", id);
      }
    } catch (RuntimeException e) {
      LOG.info("sandbox {}: could not revoke the key at the agent: {}", id, e.toString());
    }
  }
}
