package dev.paddock.runtimeapi;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Derives the keys of the sessions this runtime API keys itself (OpenHands callers): a session key
 * is HMAC-SHA256(secret, "session-key" NUL runtime id NUL generation) as base64url, the agent's
 * admin key HMAC-SHA256(secret, "admin-key" NUL runtime id) as hex. Nothing is stored but the
 * generation: {@code GET /sessions} can hand the key out again, and advancing the generation
 * (pause, resume, stop) revokes it for good. Runtime ids are random, so a session id used again
 * never repeats its predecessor's keys. Thread-safe.
 */
final class RuntimeKeys {
  private final SecureRandom random = new SecureRandom();
  private final SecretKeySpec secret;

  RuntimeKeys(String secret) {
    this.secret = new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256");
  }

  /** A new random secret, for a runtime API given none (its keys then die with the process). */
  static String randomSecret() {
    byte[] bytes = new byte[32];
    new SecureRandom().nextBytes(bytes);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }

  /** A runtime id: 128 random bits as hex. */
  String newRuntimeId() {
    byte[] bytes = new byte[16];
    random.nextBytes(bytes);
    return HexFormat.of().formatHex(bytes);
  }

  String sessionKey(String runtimeId, long generation) {
    byte[] mac = mac("session-key\0" + runtimeId + "\0" + generation);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(mac);
  }

  String adminKey(String runtimeId) {
    return HexFormat.of().formatHex(mac("admin-key\0" + runtimeId));
  }

  /**
   * A fingerprint of the secret for the sessions file: tells a restarted runtime API whether it
   * derives the same keys; reveals neither the secret nor any key.
   */
  String secretCheck() {
    return HexFormat.of().formatHex(mac("sessions-file-check"));
  }

  private byte[] mac(String message) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(secret);
      return mac.doFinal(message.getBytes(StandardCharsets.UTF_8));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is required by every Java platform", e);
    }
  }
}
