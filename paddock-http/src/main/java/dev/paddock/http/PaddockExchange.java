package dev.paddock.http;

import com.sun.net.httpserver.Headers;
import com.sun.net.httpserver.HttpContext;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpPrincipal;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One request and its response on a {@link Connection}, with the JDK's contract: {@code
 * sendResponseHeaders(code, n)} sends a body of n bytes, 0 means chunked, -1 means none; {@link
 * #close()} ends the exchange. A HEAD gets the GET's headers and no body. Owned by the connection's
 * thread; a route may write the response body from another thread while it waits for it.
 */
final class PaddockExchange extends HttpExchange {
  private final Connection connection;
  private final PaddockContext context;
  private final RequestHead head;
  private final Headers responseHeaders = new Headers();
  private final Map<String, Object> attributes = new ConcurrentHashMap<>();
  private final RequestBody requestBody;
  private InputStream requestStream;
  private OutputStream responseStream;
  private ResponseBody responseBody;
  private int responseCode = -1;
  private boolean continueSent;
  private boolean closeAfter;
  private boolean finished;
  private WebSocketListener upgradedTo;
  private ConnectionTakeover takenOverBy;

  PaddockExchange(Connection connection, PaddockContext context, RequestHead head) {
    this.connection = connection;
    this.context = context;
    this.head = head;
    this.closeAfter = !head.keepAlive();
    this.requestBody = body(connection, head);
    if (head.expectContinue()) {
      requestBody.heldBack();
    }
    this.requestStream = requestBody;
  }

  private RequestBody body(Connection connection, RequestHead head) {
    Runnable beforeRead = this::sendContinueIfExpected;
    if (head.chunked()) {
      return new RequestBody.Chunked(connection.input(), connection.config(), beforeRead);
    }
    if (head.contentLength() > 0) {
      return new RequestBody.FixedLength(connection.input(), head.contentLength(), beforeRead);
    }
    return RequestBody.empty();
  }

  /** Answers {@code Expect: 100-continue} when the route first reads the body, not before. */
  private void sendContinueIfExpected() {
    if (head.expectContinue() && !continueSent && responseCode < 0) {
      continueSent = true;
      try {
        OutputStream out = connection.output();
        out.write("HTTP/1.1 100 Continue\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
      } catch (IOException e) {
        closeAfter = true; // the body read that follows fails on the same broken socket
      }
    }
  }

  RequestHead head() {
    return head;
  }

  boolean responseStarted() {
    return responseCode >= 0;
  }

  @Override
  public Headers getRequestHeaders() {
    return head.headers();
  }

  @Override
  public Headers getResponseHeaders() {
    return responseHeaders;
  }

  @Override
  public URI getRequestURI() {
    return head.uri();
  }

  @Override
  public String getRequestMethod() {
    return head.method();
  }

  @Override
  public HttpContext getHttpContext() {
    return context;
  }

  @Override
  public InputStream getRequestBody() {
    return requestStream;
  }

  @Override
  public OutputStream getResponseBody() {
    if (responseStream == null) {
      // As the JDK: the stream exists before the headers are sent; writing first is an error.
      responseStream =
          new OutputStream() {
            @Override
            public void write(int b) throws IOException {
              started().write(b);
            }

            @Override
            public void write(byte[] data, int offset, int length) throws IOException {
              started().write(data, offset, length);
            }

            @Override
            public void flush() throws IOException {
              if (responseBody != null) {
                responseBody.flush();
              }
            }

            @Override
            public void close() throws IOException {
              if (responseBody != null) {
                responseBody.close();
              }
            }
          };
    }
    return responseStream;
  }

  private ResponseBody started() throws IOException {
    if (responseBody == null) {
      throw new IOException("sendResponseHeaders must be called before writing the body");
    }
    return responseBody;
  }

  @Override
  public void sendResponseHeaders(int code, long length) throws IOException {
    if (responseCode >= 0) {
      throw new IOException("response headers already sent");
    }
    if (code < 200 || code > 999) {
      throw new IllegalArgumentException("response code must be 200-999, got " + code);
    }
    responseCode = code;
    boolean head = this.head.method().equals("HEAD");
    boolean noBody = code == 204 || code == 304 || length < 0;
    if (connection.server().isStopping()) {
      closeAfter = true;
    }
    StringBuilder text = statusLine(code);
    if (noBody) {
      if (code != 204 && code != 304) {
        text.append("Content-Length: 0\r\n"); // a HEAD says what its GET would: no body
      }
    } else if (length > 0) {
      text.append("Content-Length: ").append(length).append("\r\n");
    } else if (this.head.http11()) {
      text.append("Transfer-Encoding: chunked\r\n");
    } else if (!head) {
      closeAfter = true;
    }
    writeHeaders(text);
    OutputStream out = connection.output();
    out.write(text.toString().getBytes(StandardCharsets.ISO_8859_1));
    responseBody = chooseBody(out, head, noBody, length);
    if (length <= 0 || head) {
      out.flush(); // a streamed reply's client sees the headers before the first event
    }
  }

  private ResponseBody chooseBody(OutputStream out, boolean head, boolean noBody, long length) {
    if (head) {
      return new ResponseBody.None("HEAD request", length > 0);
    }
    if (noBody) {
      return new ResponseBody.None("status " + responseCode + " or length -1", false);
    }
    if (length > 0) {
      return new ResponseBody.FixedLength(out, length);
    }
    return this.head.http11() ? new ResponseBody.Chunked(out) : new ResponseBody.UntilClose(out);
  }

  private StringBuilder statusLine(int code) {
    return new StringBuilder(256)
        .append("HTTP/1.1 ")
        .append(code)
        .append(' ')
        .append(Reasons.of(code))
        .append("\r\n");
  }

  private void writeHeaders(StringBuilder text) {
    if (!responseHeaders.containsKey("Date")) {
      text.append("Date: ").append(connection.clock().now()).append("\r\n");
    }
    if (closeAfter) {
      text.append("Connection: close\r\n");
    }
    for (Map.Entry<String, List<String>> header : responseHeaders.entrySet()) {
      String name = header.getKey();
      if (name.equalsIgnoreCase("Content-Length")
          || name.equalsIgnoreCase("Transfer-Encoding")
          || name.equalsIgnoreCase("Connection")) {
        continue; // framing is ours to decide
      }
      for (String value : header.getValue()) {
        text.append(name).append(": ").append(safe(value)).append("\r\n");
      }
    }
    text.append("\r\n");
  }

  /** A header value must not end the header early (response splitting). */
  private static String safe(String value) {
    if (value.indexOf('\r') < 0 && value.indexOf('\n') < 0) {
      return value;
    }
    throw new IllegalArgumentException("response header value contains CR or LF");
  }

  /**
   * Switches this exchange to WebSocket: sends the 101 with {@code accept} and the route's own
   * response headers; the connection runs {@code listener} once the handler returns.
   */
  void upgrade(String accept, WebSocketListener listener) throws IOException {
    if (responseCode >= 0) {
      throw new IOException("response headers already sent");
    }
    responseCode = 101;
    StringBuilder text =
        new StringBuilder(256)
            .append("HTTP/1.1 101 Switching Protocols\r\n")
            .append("Upgrade: websocket\r\nConnection: Upgrade\r\n")
            .append("Sec-WebSocket-Accept: ")
            .append(accept)
            .append("\r\n");
    for (Map.Entry<String, List<String>> header : responseHeaders.entrySet()) {
      for (String value : header.getValue()) {
        text.append(header.getKey()).append(": ").append(safe(value)).append("\r\n");
      }
    }
    text.append("\r\n");
    OutputStream out = connection.output();
    out.write(text.toString().getBytes(StandardCharsets.ISO_8859_1));
    out.flush();
    responseBody = new ResponseBody.None("upgraded to WebSocket", false);
    upgradedTo = listener;
  }

  /** Hands the connection to {@code takeover} after the handler; nothing is written here. */
  void takeOver(ConnectionTakeover takeover) {
    if (responseCode >= 0) {
      throw new IllegalStateException("response headers already sent; cannot take over");
    }
    responseCode = 101;
    responseBody = new ResponseBody.None("connection taken over", false);
    takenOverBy = takeover;
    closeAfter = true;
  }

  java.util.Optional<ConnectionTakeover> takenOverBy() {
    return java.util.Optional.ofNullable(takenOverBy);
  }

  java.util.Optional<WebSocketListener> upgradedTo() {
    return java.util.Optional.ofNullable(upgradedTo);
  }

  /**
   * Ends the exchange: answers a framing error the route did not answer, ends the response body,
   * and drains what is left of the request body. Idempotent.
   */
  @Override
  public void close() {
    if (finished) {
      return;
    }
    finished = true;
    try {
      if (upgradedTo != null || takenOverBy != null) {
        return;
      }
      if (responseCode < 0) {
        answerUnanswered();
      }
      responseBody.close();
      if (!responseBody.complete()) {
        closeAfter = true;
      }
      connection.output().flush();
    } catch (IOException | RuntimeException e) {
      closeAfter = true;
      return;
    }
    if (!closeAfter && !reusableAfterDrain()) {
      closeAfter = true;
    }
  }

  private boolean reusableAfterDrain() {
    if (head.expectContinue() && !continueSent && !requestBody.finished()) {
      return false; // the client may still send the body it held back: the stream is ambiguous
    }
    connection.input().timeout(connection.config().bodyIdleTimeout().toMillis());
    return requestBody.drain(connection.config().maxDrainBytes());
  }

  private void answerUnanswered() throws IOException {
    closeAfter = true;
    java.util.Optional<ProtocolError> problem = requestBody.problem();
    if (problem.isPresent()) {
      sendError(problem.get().status(), problem.get().getMessage());
    } else {
      sendError(500, "the request handler failed or sent no response");
    }
  }

  /** Sends {@code {"detail": detail}} with {@code status}. */
  void sendError(int status, String detail) throws IOException {
    byte[] body = Json.bytes(Map.of("detail", detail));
    responseHeaders.set("Content-Type", "application/json");
    sendResponseHeaders(status, body.length);
    responseBody.write(body, 0, body.length);
  }

  /** Whether the connection must close after this exchange. */
  boolean closeAfter() {
    return closeAfter;
  }

  void forceClose() {
    closeAfter = true;
  }

  @Override
  public InetSocketAddress getRemoteAddress() {
    return connection.remoteAddress();
  }

  @Override
  public int getResponseCode() {
    return responseCode;
  }

  @Override
  public InetSocketAddress getLocalAddress() {
    return connection.localAddress();
  }

  @Override
  public String getProtocol() {
    return head.version();
  }

  @Override
  public Object getAttribute(String name) {
    return attributes.get(name);
  }

  @Override
  public void setAttribute(String name, Object value) {
    if (value == null) {
      attributes.remove(name);
    } else {
      attributes.put(name, value);
    }
  }

  @Override
  public void setStreams(InputStream in, OutputStream out) {
    if (in != null) {
      requestStream = in;
    }
    if (out != null) {
      responseStream = out;
    }
  }

  @Override
  public HttpPrincipal getPrincipal() {
    return null;
  }
}
