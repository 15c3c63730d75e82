package dev.paddock.api.spi;

import dev.paddock.api.SandboxSpec;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What a backend must make real.
 *
 * @param sandboxId the sandbox; label everything created with it ({@code paddock.sandbox-id})
 * @param spec the spec
 * @param env the sandbox's environment (spec env and forwarded host variables); never secrets
 * @param sessionKeyDigests SHA-256 hex digests of the session keys the agent must accept
 * @param adminKeyDigest SHA-256 hex digest of the key that may rotate them
 */
public record RuntimeRequest(
    String sandboxId,
    SandboxSpec spec,
    Map<String, String> env,
    List<String> sessionKeyDigests,
    String adminKeyDigest) {
  public RuntimeRequest {
    Objects.requireNonNull(sandboxId, "sandboxId");
    Objects.requireNonNull(spec, "spec");
    env = Map.copyOf(env);
    sessionKeyDigests = List.copyOf(sessionKeyDigests);
    Objects.requireNonNull(adminKeyDigest, "adminKeyDigest");
  }
}
