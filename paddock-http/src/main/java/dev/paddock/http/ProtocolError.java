package dev.paddock.http;

import java.io.IOException;

/**
 * A client broke HTTP framing (malformed head, bad chunk, body shorter than declared, too slow).
 * Thrown by the wire parsers and the request body streams; when nothing was answered yet, the
 * connection answers {@link #status()} with {@code {"detail": message}} and closes.
 */
final class ProtocolError extends IOException {
  private static final long serialVersionUID = 1L;

  private final int status;

  ProtocolError(int status, String detail) {
    super(detail);
    this.status = status;
  }

  int status() {
    return status;
  }
}
