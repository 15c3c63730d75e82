package dev.paddock.controlplane;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Makes and hashes the keys of sandboxes. A session key is 256 random bits (base64url); only its
 * SHA-256 hex leaves this class for storage. A sandbox's admin key (which may rotate its agent's
 * session keys) is HMAC-SHA256(master secret, sandbox id): derived when needed, never stored, and
 * the same after a control-plane restart. Thread-safe.
 */
final class SessionKeys {
  private static final int KEY_BYTES = 32;

  private final SecureRandom random = new SecureRandom();
  private final SecretKeySpec masterSecret;

  SessionKeys(String masterSecret) {
    this.masterSecret =
        new SecretKeySpec(masterSecret.getBytes(StandardCharsets.UTF_8), "HmacSHA256");
  }

  /** A new session key: 256 random bits, base64url without padding (43 characters). */
  String newSessionKey() {
    byte[] bytes = new byte[KEY_BYTES];
    random.nextBytes(bytes);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }

  /** The admin key of one sandbox's agent, as hex. */
  String adminKey(String sandboxId) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(masterSecret);
      return HexFormat.of().formatHex(mac.doFinal(sandboxId.getBytes(StandardCharsets.UTF_8)));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is required by every Java platform", e);
    }
  }
}
