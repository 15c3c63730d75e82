package dev.paddock.hardening.badinput;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;

/**
 * One generated input: the bytes of a request, where it goes, and what the suite knows about it
 * that the invariants need (which route, which credential, whether it is well formed).
 *
 * @param route the documented route it aims at; empty for raw HTTP-layer abuse
 * @param credential who it presents itself as
 * @param privileged whether that credential may legitimately succeed on this route and resource
 * @param wellFormed whether it is valid HTTP (then it must be answered, not closed)
 * @param halfClose whether the client shuts its output after writing (truncated requests)
 */
record Probe(
    String server,
    int port,
    Optional<Routes.Operation> route,
    Credential credential,
    boolean privileged,
    boolean wellFormed,
    boolean halfClose,
    byte[] bytes,
    String summary) {

  /** Who a request presents itself as. */
  enum Credential {
    ADMIN,
    ALICE,
    BOB,
    REVOKED_USER,
    SESSION_A,
    SESSION_B,
    REVOKED_SESSION,
    WRONG,
    NONE,
    MALFORMED,
    DUPLICATED,
    PADDED;

    /** Whether this credential is refused wherever it is shown (so it must never get a 2xx). */
    boolean alwaysRefused() {
      return this == REVOKED_USER
          || this == REVOKED_SESSION
          || this == WRONG
          || this == NONE
          || this == MALFORMED
          || this == DUPLICATED;
    }
  }

  /** A well-formed HTTP/1.1 request with {@code Connection: close} and a correct length. */
  static byte[] request(String method, String target, List<String> headers, byte[] body) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    StringBuilder head = new StringBuilder();
    head.append(method).append(' ').append(target).append(" HTTP/1.1\r\n");
    head.append("Host: 127.0.0.1\r\n");
    for (String h : headers) {
      head.append(h).append("\r\n");
    }
    if (body.length > 0
        || method.equals("POST")
        || method.equals("PUT")
        || method.equals("PATCH")) {
      head.append("Content-Length: ").append(body.length).append("\r\n");
    }
    head.append("Connection: close\r\n\r\n");
    out.writeBytes(head.toString().getBytes(StandardCharsets.UTF_8));
    out.writeBytes(body);
    return out.toByteArray();
  }

  /** What to print for a finding: the request's first bytes, control characters escaped. */
  String reproduction() {
    int n = Math.min(bytes.length, 600);
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < n; i++) {
      int b = bytes[i] & 0xff;
      if (b == '\r') {
        s.append("\\r");
      } else if (b == '\n') {
        s.append("\\n");
      } else if (b < 0x20 || b >= 0x7f) {
        s.append(String.format("\\x%02x", b));
      } else {
        s.append((char) b);
      }
    }
    if (bytes.length > n) {
      s.append("... (").append(bytes.length).append(" bytes)");
    }
    return server + " " + summary + " [" + credential + "]: " + s;
  }
}
