package dev.paddock.controlplane;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Derives the keys of sandboxes from the master secret; nothing here is stored. A session key is
 * HMAC-SHA256(master, "session-key" NUL id NUL generation), 256 bits as base64url: any control
 * plane with the same master secret computes the same key for a sandbox's current generation (kept
 * in the store beside the key's hash), so a restart or another replica can give the owner its key
 * again, while the store alone reveals nothing. Pause, resume and delete advance the generation,
 * which revokes the key for good. A sandbox's first generation is random, so an id used again after
 * a delete never repeats its predecessor's keys. The admin key (which may rotate the agent's
 * session keys) is HMAC-SHA256(master, id) as hex; ids cannot contain NUL, so the two never
 * collide. Thread-safe.
 */
final class SessionKeys {
  private static final byte[] SESSION_KEY_DOMAIN = "session-key\0".getBytes(StandardCharsets.UTF_8);

  private final SecureRandom random = new SecureRandom();
  private final SecretKeySpec masterSecret;

  SessionKeys(String masterSecret) {
    this.masterSecret =
        new SecretKeySpec(masterSecret.getBytes(StandardCharsets.UTF_8), "HmacSHA256");
  }

  /** A random first generation for a new sandbox (62 bits, so advancing never overflows). */
  long firstGeneration() {
    return random.nextLong() >>> 2;
  }

  /** The session key of {@code sandboxId} at {@code generation}: base64url, 43 characters. */
  String sessionKey(String sandboxId, long generation) {
    Mac mac = mac();
    mac.update(SESSION_KEY_DOMAIN);
    mac.update((sandboxId + "\0" + generation).getBytes(StandardCharsets.UTF_8));
    return Base64.getUrlEncoder().withoutPadding().encodeToString(mac.doFinal());
  }

  /** The admin key of one sandbox's agent, as hex. */
  String adminKey(String sandboxId) {
    return HexFormat.of().formatHex(mac().doFinal(sandboxId.getBytes(StandardCharsets.UTF_8)));
  }

  private Mac mac() {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(masterSecret);
      return mac;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is required by every Java platform", e);
    }
  }
}
