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
}
