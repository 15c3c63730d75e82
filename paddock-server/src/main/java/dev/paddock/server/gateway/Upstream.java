package dev.paddock.server.gateway;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * One HTTP/1.1 connection to a sandbox's port, with buffered streams. Owned by one request at a
 * time: taken from and given back to an {@link UpstreamPool}.
 */
final class Upstream implements AutoCloseable {
  private static final int MAX_LINE = 16 << 10;

  final InetSocketAddress address;
  private final Socket socket;
  final BufferedInputStream in;
  final BufferedOutputStream out;
  private boolean reused; // set when it comes out of the pool
  private long idleSince;

  private Upstream(InetSocketAddress address, Socket socket) throws IOException {
    this.address = address;
    this.socket = socket;
    this.in = new BufferedInputStream(socket.getInputStream(), 8 << 10);
    this.out = new BufferedOutputStream(socket.getOutputStream(), 8 << 10);
  }

  static Upstream connect(InetSocketAddress address, int connectMillis) throws IOException {
    Socket socket = new Socket();
    try {
      socket.setTcpNoDelay(true);
      socket.connect(address, connectMillis);
      return new Upstream(address, socket);
    } catch (IOException e) {
      socket.close();
      throw e;
    }
  }

  /** Marks it as coming from the pool: a failure before any reply byte may be a stale socket. */
  Upstream reusedNow() {
    reused = true;
    return this;
  }

  boolean reused() {
    return reused;
  }

  void readTimeout(long millis) throws IOException {
    socket.setSoTimeout((int) Math.min(Integer.MAX_VALUE, millis));
  }

  void idleSince(long nanos) {
    this.idleSince = nanos;
  }

  long idleSince() {
    return idleSince;
  }

  boolean isClosed() {
    return socket.isClosed();
  }

  void shutdownOutput() {
    try {
      socket.shutdownOutput();
    } catch (IOException e) {
      // Already closed: the pump on the other side ends too.
    }
  }

  /** A line without its CRLF (LF alone accepted, as RFC 9112 §2.2 allows a recipient to). */
  String readLine() throws IOException {
    StringBuilder line = new StringBuilder(64);
    while (true) {
      int b = in.read();
      if (b < 0) {
        throw new EOFException("the upstream closed the connection");
      }
      if (b == '\n') {
        int end = line.length();
        return end > 0 && line.charAt(end - 1) == '\r'
            ? line.substring(0, end - 1)
            : line.toString();
      }
      if (line.length() >= MAX_LINE) {
        throw new IOException("upstream header line longer than " + MAX_LINE + " bytes");
      }
      line.append((char) b);
    }
  }

  void write(String text) throws IOException {
    out.write(text.getBytes(StandardCharsets.ISO_8859_1));
  }

  InputStream input() {
    return in;
  }

  OutputStream output() {
    return out;
  }

  @Override
  public void close() {
    try {
      socket.close();
    } catch (IOException e) {
      // Nothing to undo: the socket is unusable either way.
    }
  }
}
