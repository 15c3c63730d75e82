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

  /**
   * Chunked transfer coding. Writes are gathered into chunks of up to 32 KiB, each framed in place
   * (size line, data, CRLF in one array) so one chunk is one write to the socket, not three.
   */
  static final class Chunked extends ResponseBody {
    private static final int CAPACITY = 32 << 10;
    private static final int HEADER = 6; // "8000\r\n" at most: 4 hex digits and CRLF

    private final OutputStream out;
    private final byte[] frame = new byte[HEADER + CAPACITY + 2];
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
      while (length > 0) {
        int n = Math.min(length, CAPACITY - count);
        System.arraycopy(data, offset, frame, HEADER + count, n);
        count += n;
        offset += n;
        length -= n;
        if (count == CAPACITY) {
          emit();
        }
      }
    }

    private void emit() throws IOException {
      if (count == 0) {
        return;
      }
      byte[] size = Integer.toHexString(count).getBytes(StandardCharsets.US_ASCII);
      int start = HEADER - size.length - 2;
      System.arraycopy(size, 0, frame, start, size.length);
      frame[HEADER - 2] = '\r';
      frame[HEADER - 1] = '\n';
      frame[HEADER + count] = '\r';
      frame[HEADER + count + 1] = '\n';
      out.write(frame, start, HEADER - start + count + 2);
      count = 0;
    }

    @Override
    void end() throws IOException {
      emit();
      out.write(LAST_CHUNK);
      out.flush();
      ended = true;
    }

    @Override
    void flushBody() throws IOException {
      emit();
      out.flush();
    }

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
