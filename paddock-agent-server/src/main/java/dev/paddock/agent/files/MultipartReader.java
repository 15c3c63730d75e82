package dev.paddock.agent.files;

import dev.paddock.http.HttpError;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.Optional;

/**
 * A streaming reader of a {@code multipart/form-data} body (RFC 7578 over RFC 2046). It holds one
 * fixed buffer whatever the size of the parts: a part's body is an {@link InputStream} that ends at
 * the next boundary, so a 1 GiB file passes through without being held in memory. Malformed input
 * (no closing boundary, oversized or broken part headers, a part without a name) is an {@link
 * HttpError} 400. Not thread-safe; the stream of a part is valid until {@link #next()} is called
 * again.
 */
final class MultipartReader {
  /** One part: its form field name, the file name if it carried one, and its streamed body. */
  record Part(String name, Optional<String> filename, InputStream body) {}

  private static final int BUFFER_BYTES = 64 * 1024;
  private static final int MAX_HEADER_BYTES = 16 * 1024;
  private static final int MAX_BOUNDARY_CHARS = 200;

  private final InputStream in;
  private final byte[] delimiter;
  private final byte[] buf;
  private int pos;
  private int lim;
  private boolean eof;
  private boolean finished;
  private PartBody current;

  MultipartReader(InputStream in, String boundary) {
    this.in = in;
    this.delimiter = ("\r\n--" + boundary).getBytes(StandardCharsets.ISO_8859_1);
    this.buf = new byte[BUFFER_BYTES];
    // A virtual CRLF in front lets the first boundary match the same delimiter as all the others;
    // whatever precedes it is preamble and is skipped.
    buf[0] = '\r';
    buf[1] = '\n';
    lim = 2;
    current = new PartBody();
  }

  /**
   * The boundary named by a request's Content-Type. A missing or non-multipart type is a 422 (the
   * {@code file} field is then simply absent, as FastAPI reports it); a multipart type without a
   * usable boundary is a 400.
   */
  static String boundaryOf(Optional<String> contentType) {
    HeaderParams type = HeaderParams.parse(contentType.orElse(""));
    if (!type.value().equals("multipart/form-data")) {
      throw HttpError.unprocessable(
          "multipart field 'file' is required: send the body as multipart/form-data, got "
              + contentType.map(t -> "'" + t + "'").orElse("no Content-Type"));
    }
    String boundary = type.params().getOrDefault("boundary", "");
    if (boundary.isEmpty() || boundary.length() > MAX_BOUNDARY_CHARS || !isAscii(boundary)) {
      throw HttpError.badRequest(
          "malformed multipart body: Content-Type needs a boundary of 1 to "
              + MAX_BOUNDARY_CHARS
              + " ASCII characters");
    }
    return boundary;
  }

  /** The next part, or empty after the closing boundary. Skips what is left of the previous one. */
  Optional<Part> next() throws IOException {
    if (finished) {
      return Optional.empty();
    }
    current.skipRest();
    if (afterDelimiterIsClose()) {
      finished = true;
      return Optional.empty();
    }
    Part part = readHeaders();
    return Optional.of(part);
  }

  /**
   * Reads the rest of the body after the closing boundary (the epilogue, at most {@code maxBytes}),
   * so that a body cut short of its declared length fails here, with the stream's {@link
   * IOException}, rather than being taken as complete.
   */
  void finish(int maxBytes) throws IOException {
    if (!finished) {
      throw new IllegalStateException("finish() before the closing boundary");
    }
    long rest = lim - pos;
    pos = lim;
    byte[] scratch = new byte[8192];
    while (!eof) {
      int n = in.read(scratch);
      if (n < 0) {
        eof = true;
      } else if ((rest += n) > maxBytes) {
        throw malformed("more than " + maxBytes + " bytes follow the closing boundary");
      }
    }
  }

  /** After a delimiter: {@code --} closes the body; otherwise optional padding and CRLF. */
  private boolean afterDelimiterIsClose() throws IOException {
    int c = readByte();
    if (c == '-') {
      if (readByte() != '-') {
        throw malformed("a boundary is followed by a single '-'");
      }
      return true;
    }
    while (c == ' ' || c == '\t') {
      c = readByte();
    }
    if (c != '\r' || readByte() != '\n') {
      throw malformed("a boundary is not followed by CRLF");
    }
    return false;
  }

  private Part readHeaders() throws IOException {
    String name = null;
    Optional<String> filename = Optional.empty();
    int budget = MAX_HEADER_BYTES;
    for (String line = readLine(budget); !line.isEmpty(); line = readLine(budget)) {
      budget -= line.length() + 2;
      int colon = line.indexOf(':');
      if (colon <= 0) {
        throw malformed("a part header line has no ':'");
      }
      if (line.substring(0, colon).trim().equalsIgnoreCase("Content-Disposition")) {
        HeaderParams disposition = HeaderParams.parse(line.substring(colon + 1));
        name = disposition.params().get("name");
        filename = Optional.ofNullable(disposition.params().get("filename"));
      }
    }
    if (name == null) {
      throw malformed("a part has no Content-Disposition name");
    }
    current = new PartBody();
    return new Part(name, filename, current);
  }

  private String readLine(int budget) throws IOException {
    ByteArrayOutputStream line = new ByteArrayOutputStream(128);
    while (true) {
      int c = readByte();
      if (c == '\r') {
        if (readByte() != '\n') {
          throw malformed("a part header line ends in a bare CR");
        }
        return line.toString(StandardCharsets.UTF_8);
      }
      if (line.size() >= budget) {
        throw malformed("part headers exceed " + MAX_HEADER_BYTES + " bytes");
      }
      line.write(c);
    }
  }

  private int readByte() throws IOException {
    if (pos == lim && !fill()) {
      throw malformed("the body ended before the closing boundary");
    }
    return buf[pos++] & 0xff;
  }

  /** Moves unread bytes to the front and reads more; false at end of input. */
  private boolean fill() throws IOException {
    if (eof) {
      return false;
    }
    if (pos > 0) {
      System.arraycopy(buf, pos, buf, 0, lim - pos);
      lim -= pos;
      pos = 0;
    }
    int n = in.read(buf, lim, buf.length - lim);
    if (n < 0) {
      eof = true;
      return false;
    }
    lim += n;
    return true;
  }

  private int indexOfDelimiter(int from, int to) {
    int last = to - delimiter.length;
    outer:
    for (int i = from; i <= last; i++) {
      if (buf[i] != '\r') {
        continue;
      }
      for (int j = 1; j < delimiter.length; j++) {
        if (buf[i + j] != delimiter[j]) {
          continue outer;
        }
      }
      return i;
    }
    return -1;
  }

  private static boolean isAscii(String s) {
    return s.chars().allMatch(c -> c >= ' ' && c < 127);
  }

  private static HttpError malformed(String why) {
    return HttpError.badRequest("malformed multipart body: " + why);
  }

  /**
   * The body of the current part: bytes up to the next delimiter. The bytes before a possible
   * partial delimiter at the end of the buffer are handed out; the rest waits for more input.
   */
  private final class PartBody extends InputStream {
    private boolean done;

    /** End (exclusive) of the bytes known to be part content; -1 when not yet scanned. */
    private int safeEnd = -1;

    /** Whether {@link #safeEnd} is the start of the delimiter. */
    private boolean delimiterAtSafeEnd;

    @Override
    public int read() throws IOException {
      byte[] one = new byte[1];
      return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (len == 0) {
        return 0;
      }
      int available = available();
      while (available == 0 && !done) {
        scanMore();
        available = available();
      }
      if (done) {
        return -1;
      }
      int n = Math.min(len, available);
      System.arraycopy(buf, pos, b, off, n);
      pos += n;
      return n;
    }

    @Override
    public int available() {
      return done || safeEnd < 0 ? 0 : safeEnd - pos;
    }

    /** Reads and scans more input, or ends the part when the delimiter is next. */
    private void scanMore() throws IOException {
      if (safeEnd == pos && delimiterAtSafeEnd) {
        pos += delimiter.length;
        done = true;
        return;
      }
      if (safeEnd >= 0 && !fill()) {
        throw malformed("the body ended before the closing boundary");
      }
      int found = indexOfDelimiter(pos, lim);
      delimiterAtSafeEnd = found >= 0;
      safeEnd = found >= 0 ? found : Math.max(pos, lim - delimiter.length + 1);
    }

    void skipRest() throws IOException {
      while (!done) {
        pos += available();
        scanMore();
      }
    }
  }
}
