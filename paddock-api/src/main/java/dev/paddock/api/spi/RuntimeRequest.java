package dev.paddock.api.spi;

import dev.paddock.api.SandboxSpec;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What a backend must make real.
 *
 * @param sandboxId the sandbox; label everything created with it ({@code paddock.sandbox-id})
 * @param spec the spec
 * @param env the sandbox's environment (spec env and forwarded host variables); never secrets
 * @param sessionKeyDigests SHA-256 hex digests of the session keys the agent must accept
 * @param adminKeyDigest SHA-256 hex digest of the key that may rotate them
 * @param launchSessionKey the plaintext session key, only for a spec whose image brings its own
 *     agent-server ({@link dev.paddock.api.SandboxSpec.AgentServer#IMAGE}): OpenHands' launch
 *     contract passes it as {@code OH_SESSION_API_KEYS_0}. Never logged ({@link #toString} hides
 *     it), never stored
 */
public record RuntimeRequest(
    String sandboxId,
    SandboxSpec spec,
    Map<String, String> env,
    List<String> sessionKeyDigests,
    String adminKeyDigest,
    Optional<String> launchSessionKey) {
  public RuntimeRequest {
    Objects.requireNonNull(sandboxId, "sandboxId");
    Objects.requireNonNull(spec, "spec");
    env = Map.copyOf(env);
    sessionKeyDigests = List.copyOf(sessionKeyDigests);
    Objects.requireNonNull(adminKeyDigest, "adminKeyDigest");
    Objects.requireNonNull(launchSessionKey, "launchSessionKey");
  }

  /** A request for an agent that takes digests only (Paddock's own agent-server). */
  public RuntimeRequest(
      String sandboxId,
      SandboxSpec spec,
      Map<String, String> env,
      List<String> sessionKeyDigests,
      String adminKeyDigest) {
    this(sandboxId, spec, env, sessionKeyDigests, adminKeyDigest, Optional.empty());
  }

  @Override
  public String toString() {
    return "RuntimeRequest[sandboxId="
        + sandboxId
        + ", spec="
        + spec.id()
        + ", launchSessionKey="
        + (launchSessionKey.isPresent() ? "(hidden)" : "none")
        + "]";
  }
}
