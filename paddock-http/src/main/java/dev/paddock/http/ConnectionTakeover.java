package dev.paddock.http;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;

/**
 * Raw use of a connection after its last HTTP exchange, for a proxy that relays a protocol upgrade
 * (a WebSocket or anything else after a {@code 101}) byte for byte instead of parsing it. Register
 * with {@link HttpServers#takeOver}; the server calls {@link #run} on the connection's thread once
 * the handler has returned, and closes the socket when {@code run} returns or throws.
 */
@FunctionalInterface
public interface ConnectionTakeover {
  /**
   * Owns the connection until it returns. {@code in} starts with any byte the client sent after the
   * request (already read ahead by the server) and blocks without a timeout; {@code out} is the raw
   * socket side (the server's write watchdog still closes a connection whose write is stuck past
   * the write timeout). Nothing has been written for the request: the taker writes the whole
   * response, status line included.
   *
   * @param in the client's bytes
   * @param out to the client; flush to send
   */
  void run(InputStream in, OutputStream out) throws IOException;
}
