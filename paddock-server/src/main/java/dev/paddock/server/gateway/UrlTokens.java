package dev.paddock.server.gateway;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Instant;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Signed, expiring URL tokens that open one port of one sandbox: {@code base64url(expiry ":" port
 * ":" sandbox id) "." base64url(HMAC-SHA256)}, keyed by a key derived from the control plane's
 * master secret (so it is not the key the agents' admin keys come from). Stateless: any replica
 * checks any token; a token cannot be revoked before it expires, except by deleting the sandbox (a
 * new sandbox with the same id gets the same tokens, which is why ids are random). Thread-safe.
 */
final class UrlTokens {
  private static final Base64.Encoder ENCODE = Base64.getUrlEncoder().withoutPadding();
  private static final Base64.Decoder DECODE = Base64.getUrlDecoder();
  private final byte[] key;

  UrlTokens(String masterSecret) {
    this.key = hmac(masterSecret.getBytes(StandardCharsets.UTF_8), "paddock-gateway-url-token-v1");
  }

  String mint(String sandboxId, int port, Instant expiry) {
    String payload = expiry.getEpochSecond() + ":" + port + ":" + sandboxId;
    return ENCODE.encodeToString(payload.getBytes(StandardCharsets.UTF_8))
        + "."
        + ENCODE.encodeToString(hmac(key, payload));
  }

  /**
   * Whether {@code token} was minted for this sandbox and port and has not expired at {@code now}.
   */
  boolean valid(String token, String sandboxId, int port, Instant now) {
    int dot = token.indexOf('.');
    if (dot <= 0 || token.length() > 1024) {
      return false;
    }
    String payload;
    byte[] signature;
    try {
      payload = new String(DECODE.decode(token.substring(0, dot)), StandardCharsets.UTF_8);
      signature = DECODE.decode(token.substring(dot + 1));
    } catch (IllegalArgumentException e) {
      return false;
    }
    if (!MessageDigest.isEqual(signature, hmac(key, payload))) {
      return false;
    }
    String[] parts = payload.split(":", 3);
    return parts.length == 3
        && parts[2].equals(sandboxId)
        && parts[1].equals(Integer.toString(port))
        && now.getEpochSecond() < Long.parseLong(parts[0]);
  }

  private static byte[] hmac(byte[] key, String message) {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(new SecretKeySpec(key, "HmacSHA256"));
      return mac.doFinal(message.getBytes(StandardCharsets.UTF_8));
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("HmacSHA256 is missing from this JDK", e);
    }
  }
}
