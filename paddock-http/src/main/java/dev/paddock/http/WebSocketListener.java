package dev.paddock.http;

/**
 * Receives the events of one WebSocket connection. Callbacks run on the connection's own (virtual)
 * reader thread, one at a time and in order, so a listener needs no locking of its own for state
 * touched only in callbacks; a slow callback delays reading further frames of that connection only.
 * An exception thrown by a callback closes the connection with 1011 (internal error).
 */
public interface WebSocketListener {
  /** The handshake completed; messages may be sent from now on. Called first, exactly once. */
  default void onOpen(WebSocket socket) {}

  /** A complete text message arrived (fragments already joined, UTF-8 already validated). */
  default void onText(WebSocket socket, String text) {}

  /** A complete binary message arrived (fragments already joined). */
  default void onBinary(WebSocket socket, byte[] data) {}

  /**
   * The connection ended. Called exactly once, last: with the peer's close code and reason, with
   * the code this side sent, or with 1006 when the peer vanished without a close frame (reset, idle
   * or write timeout, server stop).
   */
  default void onClose(WebSocket socket, int code, String reason) {}
}
