package dev.paddock.api;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The one form a key is ever kept in: the lower-case hex SHA-256 of its UTF-8 bytes. Session keys,
 * API keys and agent admin keys are all stored (control-plane store, agent memory, runtime
 * requests) only as this digest.
 */
public final class KeyDigest {
  private KeyDigest() {}

  public static String sha256Hex(String key) {
    return HexFormat.of().formatHex(sha256(key));
  }

  /** Whether {@code key} hashes to {@code hexDigest}, compared in constant time. */
  public static boolean matches(String key, String hexDigest) {
    byte[] expected;
    try {
      expected = HexFormat.of().parseHex(hexDigest);
    } catch (IllegalArgumentException e) {
      return false;
    }
    return MessageDigest.isEqual(sha256(key), expected);
  }

  /** The raw digest, for constant-time comparison. */
  public static byte[] sha256(String key) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required by every Java platform", e);
    }
  }
}
