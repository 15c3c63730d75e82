package dev.paddock.bench;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Locale;

/**
 * One keep-alive HTTP/1.1 connection to the agent on loopback, written directly on a socket. It is
 * lighter than {@code java.net.http.HttpClient} (no selector thread, no async hand-offs, no
 * per-request objects beyond the reply), so the round trips measure the agent, not the client. It
 * understands exactly what the agent sends: Content-Length or chunked bodies. It also speaks to the
 * Docker Engine on its unix socket ({@link #openUnix}), which answers the same way. Not
 * thread-safe: one thread per connection.
 */
final class HttpConnection implements AutoCloseable {
  private final Closeable socket;
  private final InputStream in;
  private final OutputStream out;
  private final String fixedHeaders;

  private HttpConnection(
      Closeable socket, InputStream in, OutputStream out, String host, String header) {
    this.socket = socket;
    this.in = new BufferedInputStream(in, 64 << 10);
    this.out = out;
    this.fixedHeaders = "Host: " + host + "\r\n" + header + "\r\n";
  }

  /**
   * Connects to an agent on {@code 127.0.0.1:port}, sending {@code sessionKey} with every request.
   */
  static HttpConnection open(int port, String sessionKey) throws IOException {
    return open(port, "X-Session-API-Key", sessionKey);
  }

  /**
   * Connects to {@code 127.0.0.1:port}, sending the header {@code name: value} with every request.
   */
  static HttpConnection open(int port, String name, String value) throws IOException {
    Socket socket = new Socket(InetAddress.getLoopbackAddress(), port);
    socket.setTcpNoDelay(true);
    return new HttpConnection(
        socket,
        socket.getInputStream(),
        socket.getOutputStream(),
        "127.0.0.1:" + port,
        name + ": " + value);
  }

  /**
   * Connects to an HTTP server on the unix socket {@code path} (the Docker Engine's), sending the
   * header {@code name: value} with every request.
   */
  static HttpConnection openUnix(Path path, String name, String value) throws IOException {
    SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
    try {
      channel.connect(UnixDomainSocketAddress.of(path));
    } catch (IOException e) {
      channel.close();
      throw e;
    }
    return new HttpConnection(
        channel,
        Channels.newInputStream(channel),
        Channels.newOutputStream(channel),
        "localhost",
        name + ": " + value);
  }

  /** A reply read in full. */
  record Reply(int status, byte[] body) {
    String text() {
      return new String(body, StandardCharsets.UTF_8);
    }
  }

  Reply get(String path) throws IOException {
    send("GET", path, null);
    return readFully();
  }

  Reply delete(String path) throws IOException {
    send("DELETE", path, null);
    return readFully();
  }

  /** POSTs {@code json} and reads the whole reply. */
  Reply post(String path, byte[] json) throws IOException {
    send("POST", path, json);
    return readFully();
  }

  /**
   * POSTs {@code json} and returns the status and the body as a stream, which the caller must read
   * to its end before the next request on this connection.
   */
  StreamedReply postStreaming(String path, byte[] json) throws IOException {
    send("POST", path, json);
    return readHead();
  }

  /** A reply whose body is still on the wire. */
  record StreamedReply(int status, InputStream body) {}

  private void send(String method, String path, byte[] body) throws IOException {
    StringBuilder head = new StringBuilder(160);
    head.append(method).append(' ').append(path).append(" HTTP/1.1\r\n").append(fixedHeaders);
    if (body != null) {
      head.append("Content-Type: application/json\r\nContent-Length: ")
          .append(body.length)
          .append("\r\n");
    }
    head.append("\r\n");
    byte[] headBytes = head.toString().getBytes(StandardCharsets.ISO_8859_1);
    int bodyLength = body == null ? 0 : body.length;
    byte[] request = new byte[headBytes.length + bodyLength];
    System.arraycopy(headBytes, 0, request, 0, headBytes.length);
    if (body != null) {
      System.arraycopy(body, 0, request, headBytes.length, bodyLength);
    }
    // One write per request: with TCP_NODELAY a split head and body would be two segments.
    out.write(request);
    out.flush();
  }

  private Reply readFully() throws IOException {
    StreamedReply reply = readHead();
    try (InputStream body = reply.body()) {
      return new Reply(reply.status(), body.readAllBytes());
    }
  }

  private StreamedReply readHead() throws IOException {
    String statusLine = readLine();
    String[] parts = statusLine.split(" ", 3);
    if (parts.length < 2 || !parts[0].startsWith("HTTP/1.")) {
      throw new IOException("not an HTTP status line: '" + statusLine + "'");
    }
    int status = Integer.parseInt(parts[1]);
    long length = -1;
    boolean chunked = false;
    for (String line = readLine(); !line.isEmpty(); line = readLine()) {
      int colon = line.indexOf(':');
      String name = line.substring(0, Math.max(colon, 0)).strip().toLowerCase(Locale.ROOT);
      String value = line.substring(colon + 1).strip();
      if (name.equals("content-length")) {
        length = Long.parseLong(value);
      } else if (name.equals("transfer-encoding")) {
        chunked = value.toLowerCase(Locale.ROOT).contains("chunked");
      }
    }
    if (status == 204 || status == 304) {
      // No body by definition (RFC 9110 sections 15.3.5 and 15.4.5); the engine sends no length.
      return new StreamedReply(status, new FixedBody(0));
    }
    if (chunked) {
      return new StreamedReply(status, new ChunkedBody());
    }
    if (length < 0) {
      throw new IOException("reply " + status + " has neither Content-Length nor chunked body");
    }
    return new StreamedReply(status, new FixedBody(length));
  }

  private String readLine() throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream(64);
    int b;
    while ((b = in.read()) != '\n') {
      if (b < 0) {
        throw new EOFException("connection closed by the agent");
      }
      if (b != '\r') {
        line.write(b);
      }
    }
    return line.toString(StandardCharsets.ISO_8859_1);
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }

  /** A body of known length; closing skips what was not read, keeping the connection usable. */
  private final class FixedBody extends InputStream {
    private long remaining;

    FixedBody(long length) {
      this.remaining = length;
    }

    @Override
    public int read() throws IOException {
      byte[] one = new byte[1];
      return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (remaining == 0) {
        return -1;
      }
      int n = in.read(b, off, (int) Math.min(len, remaining));
      if (n < 0) {
        throw new EOFException("connection closed with " + remaining + " body bytes unread");
      }
      remaining -= n;
      return n;
    }

    @Override
    public void close() throws IOException {
      in.skipNBytes(remaining);
      remaining = 0;
    }
  }

  /** A chunked body (RFC 9112 section 7.1); trailers are read and ignored. */
  private final class ChunkedBody extends InputStream {
    private long chunkLeft;
    private boolean done;

    @Override
    public int read() throws IOException {
      byte[] one = new byte[1];
      return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (done || (chunkLeft == 0 && !nextChunk())) {
        return -1;
      }
      int n = in.read(b, off, (int) Math.min(len, chunkLeft));
      if (n < 0) {
        throw new EOFException("connection closed inside a chunk");
      }
      chunkLeft -= n;
      if (chunkLeft == 0) {
        readLine(); // the CRLF after the chunk data
      }
      return n;
    }

    private boolean nextChunk() throws IOException {
      String sizeLine = readLine();
      int semicolon = sizeLine.indexOf(';');
      String hex = (semicolon < 0 ? sizeLine : sizeLine.substring(0, semicolon)).strip();
      chunkLeft = Long.parseLong(hex, 16);
      if (chunkLeft == 0) {
        while (!readLine().isEmpty()) {
          // Trailer fields: none are used.
        }
        done = true;
        return false;
      }
      return true;
    }

    @Override
    public void close() throws IOException {
      byte[] sink = new byte[8 << 10];
      while (read(sink, 0, sink.length) >= 0) {
        // Drains the rest so the next request finds the connection at a message boundary.
      }
    }
  }
}
