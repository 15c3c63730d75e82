package dev.paddock.server.gateway;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpExchange;
import dev.paddock.http.HttpServers;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * Relays one request to a sandbox port over raw HTTP/1.1 on a pooled keep-alive socket, and its
 * reply back, streaming both bodies in 8 KiB steps (memory per request is bounded whatever the
 * size). A reply is flushed to the client whenever the upstream has nothing more buffered, so
 * NDJSON events and chunks pass as they arrive. An upgrade (WebSocket) is relayed byte for byte
 * after the upstream's 101 by a {@link Tunnel}. Hop-by-hop headers (RFC 9110 §7.6.1) are dropped
 * both ways; the gateway's own framing is used towards each side. Stateless apart from the pool.
 */
final class Forwarder {
  /**
   * Headers that describe one connection, never forwarded (plus any the Connection header names).
   */
  private static final Set<String> HOP_BY_HOP =
      Set.of(
          "connection",
          "keep-alive",
          "proxy-connection",
          "proxy-authenticate",
          "proxy-authorization",
          "te",
          "trailer",
          "transfer-encoding",
          "upgrade",
          "content-length",
          "host",
          "expect");

  private final UpstreamPool pool;
  private final GatewayConfig config;
  private final GatewayMetrics metrics;

  Forwarder(UpstreamPool pool, GatewayConfig config, GatewayMetrics metrics) {
    this.pool = pool;
    this.config = config;
    this.metrics = metrics;
  }

  /** What to send: where, the request target, headers to add and request headers to withhold. */
  record Plan(
      java.net.InetSocketAddress address,
      String target,
      Map<String, String> added,
      Set<String> withheld,
      String template) {}

  /**
   * Relays the exchange as {@code plan} says. Answers 502/504 {@code {"detail"}} itself when the
   * upstream cannot be reached or gives no reply; a failure after the reply started cuts the
   * client's connection (the only honest signal left).
   */
  void forward(HttpExchange exchange, Plan plan) throws IOException {
    boolean upgrade = isUpgrade(exchange);
    boolean bodyless = !hasBody(exchange);
    Upstream upstream;
    try {
      upstream = upgrade ? pool.fresh(plan.address()) : pool.acquire(plan.address());
    } catch (IOException e) {
      metrics.upstreamError(plan.template());
      Replies.detail(exchange, 502, unreachable(plan, e));
      return;
    }
    try {
      relay(exchange, plan, upstream, upgrade);
    } catch (StaleConnection e) {
      upstream.close();
      if (!bodyless) {
        metrics.upstreamError(plan.template());
        Replies.detail(exchange, 502, "the sandbox port closed the connection before answering");
        return;
      }
      retryOnce(exchange, plan, upgrade);
    }
  }

  private void retryOnce(HttpExchange exchange, Plan plan, boolean upgrade) throws IOException {
    Upstream upstream;
    try {
      upstream = pool.fresh(plan.address());
    } catch (IOException e) {
      metrics.upstreamError(plan.template());
      Replies.detail(exchange, 502, unreachable(plan, e));
      return;
    }
    try {
      relay(exchange, plan, upstream, upgrade);
    } catch (StaleConnection e) {
      upstream.close();
      metrics.upstreamError(plan.template());
      Replies.detail(exchange, 502, "the sandbox port closed the connection before answering");
    }
  }

  /** A reused socket failed before the first reply byte: its peer had closed it while idle. */
  private static final class StaleConnection extends Exception {
    private static final long serialVersionUID = 1L;

    StaleConnection(Throwable cause) {
      super(cause);
    }
  }

  private void relay(HttpExchange exchange, Plan plan, Upstream upstream, boolean upgrade)
      throws IOException, StaleConnection {
    ReplyHead reply;
    try {
      upstream.readTimeout(config.idleTimeout().toMillis());
      sendRequest(exchange, plan, upstream, upgrade);
      reply = readReply(upstream);
    } catch (SocketTimeoutException e) {
      upstream.close();
      metrics.upstreamError(plan.template());
      Replies.detail(
          exchange,
          504,
          "the sandbox port did not answer within " + config.idleTimeout().toSeconds() + " s");
      return;
    } catch (IOException e) {
      if (upstream.reused() && !(e instanceof ClientBodyFailure)) {
        throw new StaleConnection(e);
      }
      upstream.close();
      if (e instanceof ClientBodyFailure) {
        throw (IOException) e.getCause();
      }
      metrics.upstreamError(plan.template());
      Replies.detail(exchange, 502, "the sandbox port broke the connection: " + e.getMessage());
      return;
    }
    if (reply.status() == 101) {
      if (!upgrade) {
        upstream.close();
        metrics.upstreamError(plan.template());
        Replies.detail(exchange, 502, "the sandbox port switched protocols unasked");
        return;
      }
      HttpServers.takeOver(exchange, new Tunnel(upstream, reply.raw(), metrics, plan.template()));
      return;
    }
    sendReply(exchange, plan, upstream, reply);
  }

  /** The client's request body failed (it went away): not the upstream's fault. */
  private static final class ClientBodyFailure extends IOException {
    private static final long serialVersionUID = 1L;

    ClientBodyFailure(IOException cause) {
      super(cause);
    }
  }

  static boolean isUpgrade(HttpExchange exchange) {
    String upgrade = exchange.getRequestHeaders().getFirst("Upgrade");
    return upgrade != null
        && !upgrade.isBlank()
        && tokens(exchange.getRequestHeaders()).contains("upgrade");
  }

  private static boolean hasBody(HttpExchange exchange) {
    Headers h = exchange.getRequestHeaders();
    String length = h.getFirst("Content-Length");
    return h.containsKey("Transfer-Encoding") || (length != null && !length.equals("0"));
  }

  private static Set<String> tokens(Headers headers) {
    List<String> values = headers.get("Connection");
    java.util.HashSet<String> tokens = new java.util.HashSet<>();
    if (values != null) {
      for (String value : values) {
        for (String part : value.split(",")) {
          tokens.add(part.strip().toLowerCase(Locale.ROOT));
        }
      }
    }
    return tokens;
  }

  private void sendRequest(HttpExchange exchange, Plan plan, Upstream upstream, boolean upgrade)
      throws IOException {
    Headers in = exchange.getRequestHeaders();
    Set<String> named = tokens(in);
    StringBuilder head = new StringBuilder(512);
    head.append(exchange.getRequestMethod())
        .append(' ')
        .append(plan.target())
        .append(" HTTP/1.1\r\n");
    head.append("Host: ")
        .append(plan.address().getHostString())
        .append(':')
        .append(plan.address().getPort())
        .append("\r\n");
    for (Map.Entry<String, List<String>> header : in.entrySet()) {
      String name = header.getKey().toLowerCase(Locale.ROOT);
      if (HOP_BY_HOP.contains(name)
          || named.contains(name)
          || plan.withheld().contains(name)
          || plan.added().containsKey(header.getKey())) {
        continue;
      }
      for (String value : header.getValue()) {
        head.append(header.getKey()).append(": ").append(value).append("\r\n");
      }
    }
    plan.added()
        .forEach((name, value) -> head.append(name).append(": ").append(value).append("\r\n"));
    if (upgrade) {
      head.append("Connection: Upgrade\r\nUpgrade: ").append(in.getFirst("Upgrade")).append("\r\n");
    }
    String length = in.getFirst("Content-Length");
    boolean chunked = in.containsKey("Transfer-Encoding");
    if (chunked) {
      head.append("Transfer-Encoding: chunked\r\n");
    } else if (length != null) {
      head.append("Content-Length: ").append(length).append("\r\n");
    }
    head.append("\r\n");
    upstream.write(head.toString());
    if (chunked) {
      sendChunked(exchange.getRequestBody(), upstream.output());
    } else if (length != null && !length.equals("0")) {
      sendBody(exchange.getRequestBody(), upstream.output());
    }
    upstream.output().flush();
  }

  private static void sendBody(InputStream body, OutputStream out) throws IOException {
    byte[] buffer = new byte[8 << 10];
    while (true) {
      int n = readClient(body, buffer);
      if (n < 0) {
        return;
      }
      out.write(buffer, 0, n);
    }
  }

  private static void sendChunked(InputStream body, OutputStream out) throws IOException {
    byte[] buffer = new byte[8 << 10];
    while (true) {
      int n = readClient(body, buffer);
      if (n < 0) {
        out.write("0\r\n\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        return;
      }
      if (n > 0) {
        out.write(
            (Integer.toHexString(n) + "\r\n").getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        out.write(buffer, 0, n);
        out.write('\r');
        out.write('\n');
      }
    }
  }

  private static int readClient(InputStream body, byte[] buffer) throws ClientBodyFailure {
    try {
      return body.read(buffer);
    } catch (IOException e) {
      throw new ClientBodyFailure(e);
    }
  }

  /** A reply's status line and headers, and their raw text (relayed as is after a 101). */
  record ReplyHead(int status, List<String[]> headers, String raw, boolean http11) {
    String first(String name) {
      for (String[] header : headers) {
        if (header[0].equalsIgnoreCase(name)) {
          return header[1];
        }
      }
      return null;
    }

    boolean connectionClose() {
      for (String[] header : headers) {
        if (header[0].equalsIgnoreCase("Connection")
            && header[1].toLowerCase(Locale.ROOT).contains("close")) {
          return true;
        }
      }
      return !http11;
    }
  }

  /** The first final reply head (1xx interim replies other than 101 are skipped). */
  private static ReplyHead readReply(Upstream upstream) throws IOException {
    while (true) {
      ReplyHead head = readHead(upstream);
      if (head.status() >= 200 || head.status() == 101) {
        return head;
      }
    }
  }

  private static ReplyHead readHead(Upstream upstream) throws IOException {
    String status = upstream.readLine();
    StringBuilder raw = new StringBuilder(256).append(status).append("\r\n");
    if (!status.startsWith("HTTP/1.") || status.length() < 12) {
      throw new IOException("not an HTTP/1.x reply");
    }
    int code;
    try {
      code = Integer.parseInt(status.substring(9, 12));
    } catch (NumberFormatException e) {
      throw new IOException("malformed status line from the sandbox port");
    }
    List<String[]> headers = new ArrayList<>();
    int total = 0;
    while (true) {
      String line = upstream.readLine();
      raw.append(line).append("\r\n");
      if (line.isEmpty()) {
        return new ReplyHead(code, headers, raw.toString(), status.startsWith("HTTP/1.1"));
      }
      total += line.length();
      int colon = line.indexOf(':');
      if (colon <= 0 || total > (64 << 10) || headers.size() > 200) {
        throw new IOException("malformed or oversized header block from the sandbox port");
      }
      headers.add(
          new String[] {line.substring(0, colon).strip(), line.substring(colon + 1).strip()});
    }
  }

  private void sendReply(HttpExchange exchange, Plan plan, Upstream upstream, ReplyHead reply)
      throws IOException {
    Set<String> named = new java.util.HashSet<>();
    String connection = reply.first("Connection");
    if (connection != null) {
      for (String part : connection.split(",")) {
        named.add(part.strip().toLowerCase(Locale.ROOT));
      }
    }
    Headers out = exchange.getResponseHeaders();
    for (String[] header : reply.headers()) {
      String name = header[0].toLowerCase(Locale.ROOT);
      if (!HOP_BY_HOP.contains(name) && !named.contains(name)) {
        out.add(header[0], header[1]);
      }
    }
    boolean reusable = !reply.connectionClose();
    boolean complete;
    try {
      complete = copyBody(exchange, upstream, reply);
    } catch (IOException e) {
      upstream.close();
      throw e;
    }
    metrics.replied(plan.template(), reply.status());
    if (complete && reusable) {
      pool.release(upstream);
    } else {
      upstream.close();
    }
  }

  /** Sends the reply's body to the client in its own framing; true when it ended cleanly. */
  private boolean copyBody(HttpExchange exchange, Upstream upstream, ReplyHead reply)
      throws IOException {
    int status = reply.status();
    String length = reply.first("Content-Length");
    String encoding = reply.first("Transfer-Encoding");
    if (status == 204 || status == 304) {
      exchange.sendResponseHeaders(status, -1);
      return true;
    }
    if (exchange.getRequestMethod().equals("HEAD")) {
      // A HEAD reply has no body whatever its headers say; ours repeats the length it announced.
      exchange.sendResponseHeaders(status, length == null ? 0 : Math.max(-1, parseLength(length)));
      return true;
    }
    if (encoding != null && encoding.toLowerCase(Locale.ROOT).contains("chunked")) {
      exchange.sendResponseHeaders(status, 0);
      return copyChunked(upstream, exchange.getResponseBody());
    }
    if (length != null) {
      long n = parseLength(length);
      exchange.sendResponseHeaders(status, n == 0 ? -1 : n);
      return copyExactly(upstream.input(), exchange.getResponseBody(), n);
    }
    exchange.sendResponseHeaders(status, 0);
    copyUntilClose(upstream.input(), exchange.getResponseBody());
    return false;
  }

  private static long parseLength(String value) throws IOException {
    try {
      long n = Long.parseLong(value.strip());
      if (n >= 0) {
        return n;
      }
    } catch (NumberFormatException e) {
      // Falls through to the failure below.
    }
    throw new IOException("invalid Content-Length from the sandbox port");
  }

  private boolean copyExactly(InputStream in, OutputStream out, long length) throws IOException {
    byte[] buffer = new byte[8 << 10];
    long left = length;
    while (left > 0) {
      int n = in.read(buffer, 0, (int) Math.min(buffer.length, left));
      if (n < 0) {
        throw new EOFException("the sandbox port ended its reply early");
      }
      out.write(buffer, 0, n);
      left -= n;
      flushWhenDrained(in, out);
    }
    metrics.bytes(length);
    return true;
  }

  private boolean copyChunked(Upstream upstream, OutputStream out) throws IOException {
    InputStream in = upstream.input();
    while (true) {
      String line = upstream.readLine();
      int semicolon = line.indexOf(';');
      long size;
      try {
        size = Long.parseLong((semicolon < 0 ? line : line.substring(0, semicolon)).strip(), 16);
      } catch (NumberFormatException e) {
        throw new IOException("malformed chunk size from the sandbox port");
      }
      if (size == 0) {
        while (!upstream.readLine().isEmpty()) {
          // Trailers are dropped: the client's framing is ours and carries none.
        }
        return true;
      }
      copyExactly(in, out, size);
      if (!upstream.readLine().isEmpty()) {
        throw new IOException("chunk not followed by CRLF from the sandbox port");
      }
      // The chunk's CRLF may have arrived after its data: flush before waiting for the next one.
      flushWhenDrained(in, out);
    }
  }

  private void copyUntilClose(InputStream in, OutputStream out) throws IOException {
    byte[] buffer = new byte[8 << 10];
    int n;
    while ((n = in.read(buffer)) >= 0) {
      out.write(buffer, 0, n);
      metrics.bytes(n);
      flushWhenDrained(in, out);
    }
  }

  /** Flushes once nothing more is buffered: a stream's events reach the client without delay. */
  private static void flushWhenDrained(InputStream in, OutputStream out) throws IOException {
    if (in.available() == 0) {
      out.flush();
    }
  }

  private static String unreachable(Plan plan, IOException e) {
    if (e instanceof ConnectException) {
      return "nothing listens on port " + plan.address().getPort() + " of this sandbox";
    }
    if (e instanceof SocketTimeoutException) {
      return "the sandbox port did not accept a connection in time";
    }
    return "cannot reach the sandbox port: " + e.getMessage();
  }
}
