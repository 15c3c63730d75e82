package dev.paddock.backend.kit.protocol;

import dev.paddock.api.KeyDigest;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The secrets a starting agent reads from standard input ({@code --secrets-stdin}) or from a file
 * ({@code --secrets-file}): one {@code name=value} line per secret. A backend writes only digests
 * ({@code session_api_key_sha256=}, {@code admin_key_sha256=}); a person may also give plaintext
 * keys ({@code session_api_key=}, {@code admin_key=}), which the reader hashes at once. Blank
 * lines, lines without {@code =} and empty values are ignored; an unknown name is an error.
 *
 * @param sessionKeyDigests SHA-256 hex digests of the session keys the agent accepts
 * @param adminKeyDigests SHA-256 hex digests of the keys that may rotate them
 */
public record AgentSecrets(List<String> sessionKeyDigests, List<String> adminKeyDigests) {
  private static final Pattern SHA256_HEX = Pattern.compile("[0-9a-fA-F]{64}");
  private static final String SESSION_DIGEST = "session_api_key_sha256";
  private static final String SESSION_KEY = "session_api_key";
  private static final String ADMIN_DIGEST = "admin_key_sha256";
  private static final String ADMIN_KEY = "admin_key";

  public AgentSecrets {
    sessionKeyDigests = List.copyOf(sessionKeyDigests);
    adminKeyDigests = List.copyOf(adminKeyDigests);
  }

  /** Whether no secret at all was given (an agent must then refuse to serve). */
  public boolean isEmpty() {
    return sessionKeyDigests.isEmpty() && adminKeyDigests.isEmpty();
  }

  /**
   * The lines for these digests ({@code adminDigest} empty: no admin line).
   *
   * @throws IllegalArgumentException for anything that is not a SHA-256 hex digest
   */
  public static String lines(List<String> sessionDigests, String adminDigest) {
    StringBuilder lines = new StringBuilder();
    for (String digest : sessionDigests) {
      lines.append(SESSION_DIGEST).append('=').append(checkedDigest(digest)).append('\n');
    }
    if (!adminDigest.isEmpty()) {
      lines.append(ADMIN_DIGEST).append('=').append(checkedDigest(adminDigest)).append('\n');
    }
    return lines.toString();
  }

  /** The lines of these secrets (digests only). */
  public String lines() {
    StringBuilder lines = new StringBuilder(lines(sessionKeyDigests, ""));
    adminKeyDigests.forEach(d -> lines.append(ADMIN_DIGEST).append('=').append(d).append('\n'));
    return lines.toString();
  }

  /**
   * Reads secrets lines until the end of {@code in}.
   *
   * @throws IllegalArgumentException on an unknown name or a malformed digest (the message names
   *     the line's name, never its value)
   */
  public static AgentSecrets read(InputStream in) throws IOException {
    Objects.requireNonNull(in, "in");
    List<String> sessions = new ArrayList<>();
    List<String> admins = new ArrayList<>();
    BufferedReader reader = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
    for (String line; (line = reader.readLine()) != null; ) {
      int eq = line.indexOf('=');
      if (eq < 0) {
        continue;
      }
      String name = line.substring(0, eq).strip();
      String value = line.substring(eq + 1).strip();
      if (!value.isEmpty()) {
        add(name, value, sessions, admins);
      }
    }
    return new AgentSecrets(sessions, admins);
  }

  private static void add(String name, String value, List<String> sessions, List<String> admins) {
    switch (name) {
      case SESSION_KEY -> sessions.add(KeyDigest.sha256Hex(value));
      case SESSION_DIGEST -> sessions.add(checked(name, value));
      case ADMIN_KEY -> admins.add(KeyDigest.sha256Hex(value));
      case ADMIN_DIGEST -> admins.add(checked(name, value));
      default -> throw new IllegalArgumentException("unknown secret '" + name + "'");
    }
  }

  private static String checked(String name, String digest) {
    if (!SHA256_HEX.matcher(digest).matches()) {
      throw new IllegalArgumentException(name + " must be 64 hex digits (SHA-256)");
    }
    return digest;
  }

  /**
   * {@code digest}, checked to be 64 hex digits (SHA-256).
   *
   * @throws IllegalArgumentException otherwise
   */
  public static String checkedDigest(String digest) {
    if (!SHA256_HEX.matcher(digest).matches()) {
      throw new IllegalArgumentException("a key digest must be 64 hex digits (SHA-256)");
    }
    return digest;
  }
}
