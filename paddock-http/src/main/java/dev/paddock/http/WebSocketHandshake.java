package dev.paddock.http;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/** The server's half of the opening handshake (RFC 6455 §4.2): checks, then the accept value. */
final class WebSocketHandshake {
  private static final String GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

  private WebSocketHandshake() {}

  /** Whether {@code call} asks for a WebSocket at all ({@code Upgrade: websocket}). */
  static boolean requested(Call call) {
    return call.headerValues("Upgrade").stream()
        .anyMatch(v -> RequestHead.hasToken(java.util.List.of(v), "websocket"));
  }

  /** Validates the upgrade request and returns its {@code Sec-WebSocket-Accept} value. */
  static String accept(Call call) {
    if (!call.exchange().getProtocol().equals("HTTP/1.1")) {
      throw HttpError.badRequest("a WebSocket upgrade needs HTTP/1.1");
    }
    if (!RequestHead.hasToken(call.headerValues("Connection"), "upgrade")) {
      throw HttpError.badRequest("a WebSocket upgrade needs 'Connection: Upgrade'");
    }
    if (!call.header("Sec-WebSocket-Version").orElse("").trim().equals("13")) {
      call.setHeader("Sec-WebSocket-Version", "13");
      throw new HttpError(426, "unsupported Sec-WebSocket-Version; this server speaks 13");
    }
    String key = call.header("Sec-WebSocket-Key").orElse("").trim();
    if (!validKey(key)) {
      throw HttpError.badRequest("Sec-WebSocket-Key must be 16 bytes in base64");
    }
    if (call.contentLength() > 0 || call.header("Transfer-Encoding").isPresent()) {
      throw HttpError.badRequest("a WebSocket upgrade request must not have a body");
    }
    return acceptFor(key);
  }

  private static boolean validKey(String key) {
    try {
      return Base64.getDecoder().decode(key).length == 16;
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  static String acceptFor(String key) {
    try {
      MessageDigest sha1 = MessageDigest.getInstance("SHA-1");
      byte[] digest = sha1.digest((key + GUID).getBytes(StandardCharsets.US_ASCII));
      return Base64.getEncoder().encodeToString(digest);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("every JDK has SHA-1", e);
    }
  }
}
