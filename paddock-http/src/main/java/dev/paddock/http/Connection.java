package dev.paddock.http;

import com.sun.net.httpserver.Filter;
import java.io.BufferedOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.Map;
import javax.net.ssl.SSLSocket;

/**
 * One accepted socket, served on its own thread: TLS handshake (when configured), then requests one
 * after another (keep-alive) until the client closes, a timeout passes or framing breaks; then, if
 * a route upgraded it, the WebSocket until it closes. Every failure the client caused is answered
 * with {@code {"detail"}} when the protocol still allows an answer. A connection that starts on a
 * platform thread the server lent it moves to a virtual thread, and gives the platform thread back,
 * when it idles longer than {@link HttpServerConfig#platformIdle()} between requests or is
 * upgraded: platform threads serve busy connections only.
 */
final class Connection implements Runnable {
  private final PaddockHttpServer server;
  private final Socket socket;
  private final HttpServerConfig config;
  private WireInput in;
  private WireOutput wire;
  private OutputStream out;
  private volatile WebSocketConnection webSocket;
  private volatile boolean inExchange;
  // Both owned by the one thread serving the connection at a time, and handed to the next with
  // the connection itself (the pool's execute, the executor's execute or Thread.start order them).
  private Runnable giveBack; // while on a platform thread the server lent: gives it back
  private long idleSpentMillis; // idle time a move to a virtual thread carries over

  Connection(PaddockHttpServer server, Socket socket) {
    this.server = server;
    this.socket = socket;
    this.config = server.config();
  }

  PaddockHttpServer server() {
    return server;
  }

  HttpServerConfig config() {
    return config;
  }

  WireInput input() {
    return in;
  }

  OutputStream output() {
    return out;
  }

  HttpDate clock() {
    return server.clock();
  }

  InetSocketAddress remoteAddress() {
    return (InetSocketAddress) socket.getRemoteSocketAddress();
  }

  InetSocketAddress localAddress() {
    return (InetSocketAddress) socket.getLocalSocketAddress();
  }

  /** Marks the thread about to run this connection as lent: {@code back} returns it (or null). */
  void lend(Runnable back) {
    this.giveBack = back;
  }

  @Override
  public void run() {
    boolean moved = false;
    try {
      open();
      moved = serveRequests();
    } catch (IOException | RuntimeException e) {
      // The client went away or sent something unanswerable: nothing more to do than close.
    } finally {
      if (!moved) {
        end();
      }
    }
  }

  private void end() {
    lingeringClose();
    server.removed(this);
    Runnable back = giveBack;
    giveBack = null;
    if (back != null) {
      back.run();
    }
  }

  /** What a connection does on the thread it moves to. */
  @FunctionalInterface
  private interface Rest {
    void run() throws IOException;
  }

  /**
   * Gives the lent platform thread back and continues with {@code rest} where a connection without
   * one runs (the server's executor, else a new virtual thread), which ends the connection; the
   * caller must not touch the connection after this returns true.
   */
  private boolean moveToVirtualThread(Rest rest) {
    Runnable back = giveBack;
    giveBack = null;
    back.run();
    Runnable task =
        () -> {
          try {
            rest.run();
          } catch (IOException | RuntimeException e) {
            // As in run(): the connection just closes.
          } finally {
            end();
          }
        };
    java.util.concurrent.Executor executor = server.executor();
    if (executor == null) {
      Thread.ofVirtual().name("paddock-http-connection").start(task);
    } else {
      executor.execute(task); // rejected (stopping): run() ends the connection here instead
    }
    return true;
  }

  private void open() throws IOException {
    socket.setTcpNoDelay(true);
    if (socket instanceof SSLSocket tls) {
      tls.setSoTimeout((int) config.headerTimeout().toMillis());
      tls.startHandshake();
    }
    in = new WireInput(socket);
    wire = new WireOutput(socket.getOutputStream());
    out = new BufferedOutputStream(wire, 16 << 10);
  }

  /** Serves requests until the connection is done (false) or has moved to a virtual thread. */
  private boolean serveRequests() throws IOException {
    while (!server.isStopping()) {
      long idleMillis = config.idleTimeout().toMillis() - idleSpentMillis;
      long lentMillis = config.platformIdle().toMillis();
      boolean lent = giveBack != null && lentMillis < idleMillis;
      in.timeout(lent ? lentMillis : idleMillis);
      try {
        if (!in.await()) {
          return false; // the client closed its keep-alive connection
        }
      } catch (SocketTimeoutException e) {
        if (!lent) {
          return false; // idle keep-alive connection: close quietly
        }
        idleSpentMillis = lentMillis;
        return moveToVirtualThread(this::serveRequests);
      }
      idleSpentMillis = 0;
      RequestHead head = readHead();
      if (head == null) {
        return false;
      }
      if (server.isStopping()) {
        answerAndClose(503, "the server is stopping; retry on a new connection");
        return false;
      }
      PaddockExchange exchange = exchange(head);
      if (exchange.upgradedTo().isPresent()) {
        WebSocketListener listener = exchange.upgradedTo().get();
        return giveBack != null
            ? moveToVirtualThread(() -> runWebSocket(listener))
            : runWebSocket(listener);
      }
      if (exchange.takenOverBy().isPresent()) {
        ConnectionTakeover takeover = exchange.takenOverBy().get();
        return giveBack != null
            ? moveToVirtualThread(() -> runTakeover(takeover))
            : runTakeover(takeover);
      }
      if (exchange.closeAfter()) {
        return false;
      }
    }
    return false;
  }

  /** The next request head, or null after answering why it could not be read. */
  private RequestHead readHead() throws IOException {
    in.deadline(System.nanoTime() + config.headerTimeout().toNanos());
    try {
      RequestHead head = RequestHead.read(in, config);
      in.timeout(config.bodyIdleTimeout().toMillis());
      return head;
    } catch (ProtocolError e) {
      answerAndClose(e.status(), e.getMessage());
    } catch (SocketTimeoutException e) {
      answerAndClose(
          408,
          "the request line and headers did not arrive within "
              + config.headerTimeout().toSeconds()
              + " s");
    } catch (EOFException e) {
      // The client hung up inside a request head: there is no one to answer.
    }
    return null;
  }

  private void answerAndClose(int status, String detail) throws IOException {
    byte[] body = Json.bytes(Map.of("detail", detail));
    String head =
        "HTTP/1.1 "
            + status
            + " "
            + Reasons.of(status)
            + "\r\nDate: "
            + server.clock().now()
            + "\r\nContent-Type: application/json\r\nContent-Length: "
            + body.length
            + "\r\nConnection: close\r\n\r\n";
    out.write(head.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
    out.write(body);
    out.flush();
  }

  private PaddockExchange exchange(RequestHead head) throws IOException {
    PaddockContext context = server.contextFor(head.uri().getPath());
    PaddockExchange exchange = new PaddockExchange(this, context, head);
    if (context == null || context.getHandler() == null) {
      exchange.sendError(404, "no handler for " + RequestHead.shorten(head.uri().getPath()));
      exchange.close();
      return exchange;
    }
    server.exchangeStarted();
    inExchange = true;
    try {
      new Filter.Chain(context.getFilters(), context.getHandler()).doFilter(exchange);
    } catch (IOException | RuntimeException e) {
      failed(exchange);
    } finally {
      exchange.close();
      inExchange = false;
      server.exchangeEnded();
    }
    return exchange;
  }

  /**
   * A handler threw: the connection closes after the exchange, whose close answers (a framing error
   * the body stream hit, else 500) if the handler had not answered yet.
   */
  private void failed(PaddockExchange exchange) {
    exchange.forceClose();
  }

  /** Runs the WebSocket on this thread until it closes; false: the connection is done. */
  private boolean runWebSocket(WebSocketListener listener) {
    WebSocketConnection connection = new WebSocketConnection(this, socket, in, out, listener);
    webSocket = connection;
    connection.run();
    return false;
  }

  /**
   * Relays raw bytes; the socket is closed afterwards (no lingering: the taker ended it). False:
   * the connection is done.
   */
  private boolean runTakeover(ConnectionTakeover takeover) throws IOException {
    in.timeout(0);
    InputStream raw =
        new InputStream() {
          @Override
          public int read() throws IOException {
            return in.read();
          }

          @Override
          public int read(byte[] target, int offset, int length) throws IOException {
            return in.read(target, offset, length);
          }
        };
    out.flush();
    try {
      takeover.run(raw, wire);
    } finally {
      abort();
    }
    return false;
  }

  /**
   * Called by the server's watchdog: closes the socket if a write has been blocked too long, or a
   * WebSocket close handshake has waited too long for the peer's answer.
   */
  void watch(long nowNanos) {
    if (wire != null && wire.stuckSince(nowNanos - config.writeTimeout().toNanos())) {
      abort();
    }
    WebSocketConnection ws = webSocket;
    if (ws != null && ws.closeOverdue(nowNanos)) {
      abort();
    }
  }

  /** Server stop: WebSockets get 1001, everything else is closed at once. */
  void shutdown() {
    WebSocketConnection ws = webSocket;
    if (ws != null) {
      ws.goingAway();
    }
    abort();
  }

  void abort() {
    PaddockHttpServer.closeQuietly(socket);
  }

  /**
   * Ends the connection so that a reply already written reaches the client: half-close, then read
   * and discard what the client still sends (bounded), then close. Closing with unread input would
   * make the kernel send a reset, which can destroy the reply before the client read it.
   */
  private void lingeringClose() {
    if (socket.isClosed()) {
      return;
    }
    try {
      if (out != null) {
        out.flush();
      }
      if (!(socket instanceof SSLSocket) && in != null && !inExchange) {
        socket.shutdownOutput();
        discardInput();
      }
    } catch (IOException | RuntimeException e) {
      // Lingering is best effort.
    } finally {
      PaddockHttpServer.closeQuietly(socket);
    }
  }

  private void discardInput() throws IOException {
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(2);
    in.deadline(deadline);
    byte[] scratch = new byte[8192];
    long left = config.maxDrainBytes();
    int n;
    while (left > 0 && (n = in.read(scratch, 0, scratch.length)) >= 0) {
      left -= n;
    }
  }
}
