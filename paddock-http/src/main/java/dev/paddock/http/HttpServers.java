package dev.paddock.http;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;

/**
 * Creates Paddock's own HTTP/1.1 server: a {@link HttpServer} (so {@code HttpHandler}s and the
 * {@link Router} run unchanged) that also upgrades to WebSocket ({@link Router#websocket}), speaks
 * TLS when configured, and enforces the limits and timeouts of {@link HttpServerConfig}.
 *
 * <p>One virtual thread per connection (or a task on the executor given to {@code setExecutor});
 * handlers run on that thread. See docs/ARCHITECTURE.md ("HTTP layer") and docs/CONCURRENCY.md.
 */
public final class HttpServers {
  private HttpServers() {}

  /**
   * Binds {@code config.address()} and returns the server, not yet started (call {@code start()}).
   *
   * @throws IOException when the address cannot be bound
   */
  public static HttpServer create(HttpServerConfig config) throws IOException {
    return PaddockHttpServer.bind(config);
  }

  /**
   * Takes the connection of {@code exchange} over once its handler returns: no HTTP response is
   * written by the server; {@code takeover} writes whatever it relays (see {@link
   * ConnectionTakeover}). The exchange must come from a server made here and must not have sent
   * response headers yet; the connection never serves another request.
   *
   * @throws IllegalArgumentException when the exchange is not one of this package's servers
   * @throws IllegalStateException when its response has already started
   */
  public static void takeOver(
      com.sun.net.httpserver.HttpExchange exchange, ConnectionTakeover takeover) {
    if (!(exchange instanceof PaddockExchange ours)) {
      throw new IllegalArgumentException("not an exchange of a server from HttpServers.create");
    }
    ours.takeOver(java.util.Objects.requireNonNull(takeover, "takeover"));
  }
}
