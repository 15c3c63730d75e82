package dev.paddock.server;

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
}
