package dev.paddock.http;

import java.io.IOException;

/**
 * One open server-side WebSocket connection (RFC 6455), handed to a {@link WebSocketListener}.
 *
 * <p>Thread-safe: any thread may send, and sends are serialised (one frame at a time, never
 * interleaved). A send blocks while the peer does not read, but at most for the server's write
 * timeout; after that the connection is closed (code 1006 reported to the listener) and the send
 * throws. Sending on a closed socket throws {@link IOException}.
 */
public interface WebSocket {
  /** Sends one text message (one frame). */
  void sendText(String text) throws IOException;

  /** Sends {@code length} bytes of {@code data} from {@code offset} as one binary message. */
  void sendBinary(byte[] data, int offset, int length) throws IOException;

  /**
   * Starts the close handshake: sends a close frame with {@code code} (1000 for normal, 4000-4999
   * for application codes) and {@code reason} (truncated to fit a control frame), then closes the
   * socket once the peer answers or after a short grace. Idempotent: later calls do nothing. Never
   * throws; a peer that already vanished just ends the connection.
   */
  void close(int code, String reason);

  /** Whether messages may still be sent: false once a close frame was sent or received. */
  boolean isOpen();
}
