package dev.paddock.http;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * The response body stream chosen by {@code sendResponseHeaders}: fixed length, chunked, until
 * close (HTTP/1.0), none, or HEAD's discard. Writes go to the connection's buffered output; {@code
 * flush()} pushes them to the client; {@code close()} ends the body (the chunked terminator).
 */
abstract class ResponseBody extends OutputStream {
  private boolean closed;

  /** Whether the body was ended properly, so the connection may carry another request. */
  abstract boolean complete();

  abstract void writeBody(byte[] data, int offset, int length) throws IOException;

  abstract void end() throws IOException;

  abstract void flushBody() throws IOException;

  @Override
  public final void write(int b) throws IOException {
    write(new byte[] {(byte) b}, 0, 1);
  }

  @Override
  public final void write(byte[] data, int offset, int length) throws IOException {
    if (closed) {
      throw new IOException("response body stream is closed");
    }
    java.util.Objects.checkFromIndexSize(offset, length, data.length);
    if (length > 0) {
      writeBody(data, offset, length);
    }
  }

  @Override
  public final void flush() throws IOException {
    if (!closed) {
      flushBody();
    }
  }

  @Override
  public final void close() throws IOException {
    if (!closed) {
      closed = true;
      end();
    }
  }

  final boolean closed() {
    return closed;
  }

  /**
   * Exactly the declared number of bytes; more is an error, fewer leaves the connection unusable.
   */
  static final class FixedLength extends ResponseBody {
    private final OutputStream out;
    private final long length;
    private long written;

    FixedLength(OutputStream out, long length) {
      this.out = out;
      this.length = length;
    }

    @Override
    boolean complete() {
      return written == length;
    }

    @Override
    void writeBody(byte[] data, int offset, int count) throws IOException {
      if (written + count > length) {
        throw new IOException("response body is longer than its Content-Length " + length);
      }
      out.write(data, offset, count);
      written += count;
    }

    @Override
    void end() throws IOException {
      out.flush();
    }

    @Override
    void flushBody() throws IOException {
      out.flush();
    }
  }

  /** Chunked transfer coding; small writes are gathered into chunks of up to 8 KiB. */
  static final class Chunked extends ResponseBody {
    private final OutputStream out;
    private final byte[] pending = new byte[8192];
    private int count;
    private boolean ended;

    Chunked(OutputStream out) {
      this.out = out;
    }

    @Override
    boolean complete() {
      return ended;
    }

    @Override
    void writeBody(byte[] data, int offset, int length) throws IOException {
      if (length >= pending.length) {
        emitPending();
        chunk(data, offset, length);
        return;
      }
      if (count + length > pending.length) {
        emitPending();
      }
      System.arraycopy(data, offset, pending, count, length);
      count += length;
    }

    private void emitPending() throws IOException {
      if (count > 0) {
        chunk(pending, 0, count);
        count = 0;
      }
    }

    private void chunk(byte[] data, int offset, int length) throws IOException {
      out.write((Integer.toHexString(length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
      out.write(data, offset, length);
      out.write(CRLF);
    }

    @Override
    void end() throws IOException {
      emitPending();
      out.write(LAST_CHUNK);
      out.flush();
      ended = true;
    }

    @Override
    void flushBody() throws IOException {
      emitPending();
      out.flush();
    }

    private static final byte[] CRLF = {'\r', '\n'};
    private static final byte[] LAST_CHUNK = "0\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
  }

  /** HTTP/1.0 has no chunking: the body ends when the connection closes. */
  static final class UntilClose extends ResponseBody {
    private final OutputStream out;

    UntilClose(OutputStream out) {
      this.out = out;
    }

    @Override
    boolean complete() {
      return false; // the close is the end marker
    }

    @Override
    void writeBody(byte[] data, int offset, int length) throws IOException {
      out.write(data, offset, length);
    }

    @Override
    void end() throws IOException {
      out.flush();
    }

    @Override
    void flushBody() throws IOException {
      out.flush();
    }
  }

  /**
   * No body may follow (HEAD, 204, 304, length -1). A fixed-length GET body written for a HEAD is
   * discarded; a streamed one fails at its first write so an endless stream ends at once.
   */
  static final class None extends ResponseBody {
    private final String why;
    private final boolean discard;

    None(String why, boolean discard) {
      this.why = why;
      this.discard = discard;
    }

    @Override
    boolean complete() {
      return true;
    }

    @Override
    void writeBody(byte[] data, int offset, int length) throws IOException {
      if (!discard) {
        throw new IOException("no response body allowed: " + why);
      }
    }

    @Override
    void end() {}

    @Override
    void flushBody() {}
  }
}
