package dev.paddock.server;

import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxStatus;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Plaintext session keys held in this control plane's memory only (never in the store, never on
 * disk), so the owner's {@code GET /api/v1/sandboxes?id=} can return the key while the sandbox is
 * RUNNING, as OpenHands clients expect after polling. Lost on restart (then resume issues a new
 * one); dropped on pause and delete. Thread-safe.
 */
final class SessionKeyCache {
  private final Map<String, String> keys = new ConcurrentHashMap<>();

  /** Remembers the key a start or resume reply carries. */
  SandboxInfo remember(SandboxInfo info) {
    info.sessionApiKey().ifPresent(key -> keys.put(info.id(), key));
    return info;
  }

  /** The info with its key filled in when the sandbox is RUNNING and a key is known. */
  SandboxInfo fill(SandboxInfo info) {
    if (info.status() != SandboxStatus.RUNNING) {
      return info.withoutKey();
    }
    return info.withKey(info.sessionApiKey().or(() -> Optional.ofNullable(keys.get(info.id()))));
  }

  void forget(String sandboxId) {
    keys.remove(sandboxId);
  }
}
