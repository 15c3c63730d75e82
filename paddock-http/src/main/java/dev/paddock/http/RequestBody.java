package dev.paddock.http;

import java.io.IOException;
import java.io.InputStream;
import java.net.SocketTimeoutException;

/**
 * A request body stream bounded to the body: reads end at its last byte, never in the next request.
 * A body that ends early (the client half-closed before its Content-Length), a malformed chunk or a
 * stall longer than the body idle timeout throws {@link ProtocolError}, so a route never mistakes a
 * truncated upload for a complete one.
 */
abstract class RequestBody extends InputStream {
  private final Runnable beforeFirstRead;
  private boolean started;
  private boolean closed;
  private ProtocolError problem;

  RequestBody(Runnable beforeFirstRead) {
    this.beforeFirstRead = beforeFirstRead;
  }

  /** Whether the last byte of the body has been consumed. */
  abstract boolean finished();

  /** Reads up to {@code length} body bytes (never past the body); -1 when finished. */
  abstract int readBody(byte[] target, int offset, int length) throws IOException;

  @Override
  public final int read() throws IOException {
    byte[] one = new byte[1];
    int n = read(one, 0, 1);
    return n < 0 ? -1 : one[0] & 0xff;
  }

  @Override
  public final int read(byte[] target, int offset, int length) throws IOException {
    if (closed) {
      throw new IOException("request body stream is closed");
    }
    java.util.Objects.checkFromIndexSize(offset, length, target.length);
    if (length == 0) {
      return 0;
    }
    if (!started) {
      started = true;
      beforeFirstRead.run();
    }
    try {
      return readBody(target, offset, length);
    } catch (SocketTimeoutException e) {
      problem =
          new ProtocolError(408, "the request body stalled: no bytes within the body timeout");
      throw problem;
    } catch (ProtocolError e) {
      problem = e;
      throw e;
    }
  }

  /** The framing failure this stream threw, if any: the reply owed to a route that gave none. */
  final java.util.Optional<ProtocolError> problem() {
    return java.util.Optional.ofNullable(problem);
  }

  @Override
  public final long skip(long n) throws IOException {
    byte[] scratch = new byte[(int) Math.min(8192, Math.max(n, 1))];
    long skipped = 0;
    while (skipped < n) {
      int r = read(scratch, 0, (int) Math.min(scratch.length, n - skipped));
      if (r < 0) {
        break;
      }
      skipped += r;
    }
    return skipped;
  }

  /** Marks the stream closed for the route; the connection drains what is left. */
  @Override
  public final void close() {
    closed = true;
  }

  /**
   * Reads and discards the rest of the body, at most {@code max} bytes; true when the body is
   * finished (the connection can carry another request).
   */
  final boolean drain(long max) {
    if (finished()) {
      return true;
    }
    byte[] scratch = new byte[8192];
    long left = max;
    try {
      while (left > 0 && !finished()) {
        int r = readBody(scratch, 0, (int) Math.min(scratch.length, left));
        if (r < 0) {
          break;
        }
        left -= r;
      }
    } catch (IOException e) {
      return false;
    }
    return finished();
  }

  /** No body at all (GET, or neither Content-Length nor Transfer-Encoding). */
  static RequestBody empty() {
    return new FixedLength(null, 0, () -> {});
  }

  /** A body of exactly {@code length} bytes. */
  static final class FixedLength extends RequestBody {
    private final WireInput in;
    private final long length;
    private long remaining;

    FixedLength(WireInput in, long length, Runnable beforeFirstRead) {
      super(beforeFirstRead);
      this.in = in;
      this.length = length;
      this.remaining = length;
    }

    @Override
    boolean finished() {
      return remaining == 0;
    }

    @Override
    int readBody(byte[] target, int offset, int max) throws IOException {
      if (remaining == 0) {
        return -1;
      }
      int n = in.read(target, offset, (int) Math.min(max, remaining));
      if (n < 0) {
        throw new ProtocolError(
            400,
            "request body ended after "
                + (length - remaining)
                + " of its "
                + length
                + " bytes (Content-Length)");
      }
      remaining -= n;
      return n;
    }

    @Override
    public int available() {
      return 0;
    }
  }

  /** A chunked body (RFC 9112 §7.1); chunk extensions are ignored, trailers are discarded. */
  static final class Chunked extends RequestBody {
    private static final int MAX_SIZE_LINE = 1024;

    private final WireInput in;
    private final HttpServerConfig config;
    private long chunkLeft;
    private boolean done;

    Chunked(WireInput in, HttpServerConfig config, Runnable beforeFirstRead) {
      super(beforeFirstRead);
      this.in = in;
      this.config = config;
    }

    @Override
    boolean finished() {
      return done;
    }

    @Override
    int readBody(byte[] target, int offset, int max) throws IOException {
      if (done) {
        return -1;
      }
      if (chunkLeft == 0 && !nextChunk()) {
        return -1;
      }
      int n = in.read(target, offset, (int) Math.min(max, chunkLeft));
      if (n < 0) {
        throw new ProtocolError(400, "chunked request body ended inside a chunk");
      }
      chunkLeft -= n;
      if (chunkLeft == 0) {
        endOfChunk();
      }
      return n;
    }

    private boolean nextChunk() throws IOException {
      String line = sizeLine();
      chunkLeft = parseSize(line);
      if (chunkLeft == 0) {
        skipTrailers();
        done = true;
        return false;
      }
      return true;
    }

    private String sizeLine() throws IOException {
      try {
        return in.readLine(MAX_SIZE_LINE, 400, "a chunk size line");
      } catch (java.io.EOFException e) {
        throw new ProtocolError(400, "chunked request body ended before its last chunk");
      }
    }

    private static long parseSize(String line) throws ProtocolError {
      int end = line.indexOf(';');
      String hex = (end < 0 ? line : line.substring(0, end)).strip();
      if (hex.isEmpty() || hex.length() > 15) {
        throw new ProtocolError(400, "invalid chunk size '" + RequestHead.shorten(line) + "'");
      }
      for (int i = 0; i < hex.length(); i++) {
        if (Character.digit(hex.charAt(i), 16) < 0) {
          throw new ProtocolError(400, "invalid chunk size '" + RequestHead.shorten(line) + "'");
        }
      }
      return Long.parseLong(hex, 16);
    }

    private void endOfChunk() throws IOException {
      int cr = in.read();
      int lf = in.read();
      if (cr < 0 || lf < 0) {
        throw new ProtocolError(400, "chunked request body ended after a chunk");
      }
      if (cr != '\r' || lf != '\n') {
        throw new ProtocolError(400, "chunk data is longer than its size, or not followed by CRLF");
      }
    }

    private void skipTrailers() throws IOException {
      int left = config.maxHeaderBytes();
      while (true) {
        String line;
        try {
          line = in.readLine(Math.min(config.maxHeaderLineBytes(), left), 431, "a trailer");
        } catch (java.io.EOFException e) {
          throw new ProtocolError(400, "chunked request body ended in its trailers");
        }
        if (line.isEmpty()) {
          return;
        }
        left -= line.length() + 2;
      }
    }
  }
}
