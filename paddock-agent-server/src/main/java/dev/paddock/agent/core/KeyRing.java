package dev.paddock.agent.core;

import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The set of accepted session keys, held only as SHA-256 digests. A presented key is hashed and
 * compared against every digest in constant time ({@link MessageDigest#isEqual}), so neither the
 * plaintext nor timing reveals which key matched. The set is replaced atomically on rotation:
 * readers see either the old set or the new one, never a mix. Thread-safe.
 */
public final class KeyRing {
  private static final Pattern SHA256_HEX = Pattern.compile("[0-9a-fA-F]{64}");

  private volatile List<byte[]> digests;

  private KeyRing(List<byte[]> digests) {
    this.digests = List.copyOf(digests);
  }

  /** A ring holding the digests of {@code plaintextKeys}. An empty ring accepts nothing. */
  public static KeyRing ofKeys(Collection<String> plaintextKeys) {
    List<byte[]> list = new ArrayList<>();
    for (String key : plaintextKeys) {
      list.add(sha256(key));
    }
    return new KeyRing(list);
  }

  /** A ring from hex-encoded SHA-256 digests; rejects anything that is not 64 hex digits. */
  public static KeyRing ofDigests(Collection<String> hexDigests) {
    return new KeyRing(parseDigests(hexDigests));
  }

  public boolean isEmpty() {
    return digests.isEmpty();
  }

  public int size() {
    return digests.size();
  }

  /** True when {@code presented} hashes to one of the held digests. */
  public boolean accepts(String presented) {
    if (presented == null || presented.isEmpty()) {
      return false;
    }
    byte[] candidate = sha256(presented);
    boolean match = false;
    for (byte[] digest : digests) {
      // No early exit: every digest is compared, whatever matched.
      match |= MessageDigest.isEqual(digest, candidate);
    }
    return match;
  }

  /** Replaces the whole set; keys not in {@code hexDigests} stop working at once. */
  public void replaceDigests(Collection<String> hexDigests) {
    digests = List.copyOf(parseDigests(hexDigests));
  }

  public static String sha256Hex(String key) {
    return dev.paddock.api.KeyDigest.sha256Hex(key);
  }

  private static List<byte[]> parseDigests(Collection<String> hexDigests) {
    List<byte[]> list = new ArrayList<>();
    for (String hex : hexDigests) {
      if (hex == null || !SHA256_HEX.matcher(hex).matches()) {
        throw new IllegalArgumentException("not a hex SHA-256 digest (64 hex digits): " + hex);
      }
      list.add(HexFormat.of().parseHex(hex));
    }
    return list;
  }

  static byte[] sha256(String key) {
    return dev.paddock.api.KeyDigest.sha256(key);
  }
}
