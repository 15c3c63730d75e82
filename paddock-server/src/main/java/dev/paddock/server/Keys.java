package dev.paddock.server;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;

/** Random API keys and their SHA-256 digests (the only form the store ever holds). */
final class Keys {
  private static final SecureRandom RANDOM = new SecureRandom();

  private Keys() {}

  /** A new key: 256 random bits, base64url, with a prefix saying what it is. */
  static String newApiKey() {
    byte[] bytes = new byte[32];
    RANDOM.nextBytes(bytes);
    return "pdk_" + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }

  static String newId() {
    byte[] bytes = new byte[12];
    RANDOM.nextBytes(bytes);
    return HexFormat.of().formatHex(bytes);
  }

  static String sha256Hex(String key) {
    try {
      return HexFormat.of()
          .formatHex(
              MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required by every Java platform", e);
    }
  }
}
