package dev.paddock.http;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;

/**
 * The buffered input side of one connection, shared by the head parser, the request body streams
 * and the WebSocket frame reader (bytes read ahead stay in the buffer for whoever reads next).
 * Reads block with the socket timeout; a deadline, when set, caps the time of every refill so a
 * request head trickled in byte by byte still ends at the deadline.
 */
final class WireInput {
  private final Socket socket;
  private final InputStream in;
  private final byte[] buffer = new byte[16 << 10];
  private int position;
  private int limit;
  private long deadlineNanos; // 0: none, reads use timeoutMillis
  private int timeoutMillis;

  WireInput(Socket socket) throws IOException {
    this.socket = socket;
    this.in = socket.getInputStream();
  }

  /** Every later refill waits at most {@code millis} (0: forever). Clears a deadline. */
  void timeout(long millis) {
    this.timeoutMillis = (int) Math.min(Integer.MAX_VALUE, millis);
    this.deadlineNanos = 0;
  }

  /** Refills must all complete before {@code System.nanoTime()} reaches {@code nanos}. */
  void deadline(long nanos) {
    this.deadlineNanos = nanos;
  }

  /** Whether bytes are already buffered (e.g. a pipelined request or the first WebSocket frame). */
  boolean hasBuffered() {
    return position < limit;
  }

  /** Waits for at least one byte; false at end of stream. */
  boolean await() throws IOException {
    return position < limit || fill();
  }

  private boolean fill() throws IOException {
    applyTimeout();
    int n = in.read(buffer, 0, buffer.length);
    if (n <= 0) {
      return false;
    }
    position = 0;
    limit = n;
    return true;
  }

  private void applyTimeout() throws IOException {
    int millis = timeoutMillis;
    if (deadlineNanos != 0) {
      long left = deadlineNanos - System.nanoTime();
      if (left <= 0) {
        throw new SocketTimeoutException("deadline passed");
      }
      millis = (int) Math.max(1, Math.min(Integer.MAX_VALUE, left / 1_000_000));
    }
    if (socket.getSoTimeout() != millis) {
      socket.setSoTimeout(millis);
    }
  }

  /** One byte, or -1 at end of stream. */
  int read() throws IOException {
    if (position >= limit && !fill()) {
      return -1;
    }
    return buffer[position++] & 0xff;
  }

  /** Up to {@code length} bytes; -1 at end of stream. */
  int read(byte[] target, int offset, int length) throws IOException {
    if (length == 0) {
      return 0;
    }
    if (position >= limit) {
      if (length >= buffer.length) {
        applyTimeout();
        return in.read(target, offset, length); // large reads skip the copy
      }
      if (!fill()) {
        return -1;
      }
    }
    int n = Math.min(length, limit - position);
    System.arraycopy(buffer, position, target, offset, n);
    position += n;
    return n;
  }

  /** Exactly {@code length} bytes, else an {@link java.io.EOFException}. */
  void readFully(byte[] target, int offset, int length) throws IOException {
    int done = 0;
    while (done < length) {
      int n = read(target, offset + done, length - done);
      if (n < 0) {
        throw new java.io.EOFException("connection closed after " + done + " of " + length);
      }
      done += n;
    }
  }

  /**
   * Reads one line ending in CRLF and returns it without the CRLF (ISO-8859-1). A bare LF, a CR not
   * followed by LF, or a NUL is a 400; more than {@code max} bytes is {@code tooLongStatus}; end of
   * stream is an {@link java.io.EOFException}.
   */
  String readLine(int max, int tooLongStatus, String what) throws IOException {
    StringBuilder line = new StringBuilder(64);
    while (true) {
      int b = read();
      if (b < 0) {
        throw new java.io.EOFException("connection closed in the middle of " + what);
      }
      if (b == '\r') {
        if (read() != '\n') {
          throw new ProtocolError(400, what + " has a CR not followed by LF");
        }
        return line.toString();
      }
      if (b == '\n') {
        throw new ProtocolError(400, what + " ends in a bare LF; HTTP lines end in CRLF");
      }
      if (b == 0) {
        throw new ProtocolError(400, what + " contains a NUL byte");
      }
      if (line.length() >= max) {
        throw new ProtocolError(tooLongStatus, what + " is longer than " + max + " bytes");
      }
      line.append((char) b);
    }
  }

  static String latin1(byte[] bytes) {
    return new String(bytes, StandardCharsets.ISO_8859_1);
  }
}
