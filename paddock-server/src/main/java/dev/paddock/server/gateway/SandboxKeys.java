package dev.paddock.server.gateway;

import java.util.Optional;

/**
 * The current session key of a running sandbox, for the gateway's own calls to its agent (asking
 * which ports it listens on). Never shown to a client. Implementations must be thread-safe.
 */
@FunctionalInterface
public interface SandboxKeys {
  /** The key the sandbox's agent accepts now; empty when it has none (revoked, not running). */
  Optional<String> sessionKey(String sandboxId);
}
