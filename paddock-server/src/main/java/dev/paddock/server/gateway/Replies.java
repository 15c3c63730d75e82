package dev.paddock.server.gateway;

import com.sun.net.httpserver.HttpExchange;
import dev.paddock.http.Json;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Map;

/** The gateway's own answers: {@code {"detail": ...}} with a status, as every Paddock error. */
final class Replies {
  private Replies() {}

  static void detail(HttpExchange exchange, int status, String detail) throws IOException {
    byte[] body = Json.bytes(Map.of("detail", detail));
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    exchange.sendResponseHeaders(status, body.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(body);
    }
  }
}
