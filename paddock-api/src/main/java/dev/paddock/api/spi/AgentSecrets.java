package dev.paddock.api.spi;

import java.util.List;
import java.util.regex.Pattern;

/**
 * What a backend writes to a starting agent's standard input ({@code --secrets-stdin}): one {@code
 * session_api_key_sha256=} line per session key digest and an {@code admin_key_sha256=} line.
 * Digests only, never keys.
 */
public final class AgentSecrets {
  private static final Pattern SHA256_HEX = Pattern.compile("[0-9a-fA-F]{64}");

  private AgentSecrets() {}

  /**
   * The stdin lines for these digests ({@code adminDigest} empty: no admin line).
   *
   * @throws IllegalArgumentException for anything that is not a SHA-256 hex digest
   */
  public static String lines(List<String> sessionDigests, String adminDigest) {
    StringBuilder lines = new StringBuilder();
    for (String digest : sessionDigests) {
      lines.append("session_api_key_sha256=").append(checkedDigest(digest)).append('\n');
    }
    if (!adminDigest.isEmpty()) {
      lines.append("admin_key_sha256=").append(checkedDigest(adminDigest)).append('\n');
    }
    return lines.toString();
  }

  /** {@code digest}, checked to be 64 hex digits (SHA-256). */
  public static String checkedDigest(String digest) {
    if (!SHA256_HEX.matcher(digest).matches()) {
      throw new IllegalArgumentException("a key digest must be 64 hex digits (SHA-256)");
    }
    return digest;
  }
}
