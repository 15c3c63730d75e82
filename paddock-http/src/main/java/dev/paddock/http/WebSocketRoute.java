package dev.paddock.http;

/**
 * Accepts or refuses a WebSocket upgrade request registered with {@link Router#websocket}. Runs on
 * the request's thread before the 101 is sent, after the Router's auth check for protected
 * prefixes; it may read the path parameters, query and headers of {@code call} but must not send a
 * response.
 */
@FunctionalInterface
public interface WebSocketRoute {
  /**
   * Returns the listener of the new connection. Throwing {@link HttpError} refuses the upgrade with
   * that status and {@code {"detail": message}}; any other exception is a 500 with an error id.
   */
  WebSocketListener accept(Call call) throws Exception;
}
