package dev.paddock.hardening.badinput;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * One HTTP/1.1 exchange over a plain socket, with whatever bytes the caller gives: the JDK's client
 * will not send bare LFs, NULs, wrong lengths or duplicate restricted headers. The whole exchange
 * is bounded: a reply whose status line and headers (and, for an error, its body) have not arrived
 * within the bound is a hang. A 2xx or 3xx body is read for at most 200 ms past its headers:
 * streaming routes never end.
 */
final class RawHttp {
  private static final int MAX_HEAD = 256 << 10;
  private static final int MAX_BODY = 1 << 20;
  private static final long SUCCESS_BODY_NANOS = 200_000_000L;

  private RawHttp() {}

  /** What the server did. */
  enum Kind {
    /** It answered with a status line. */
    ANSWERED,
    /** It closed (or reset) the connection without a status line, within the bound. */
    CLOSED,
    /** Nothing within the bound: neither an answer nor a close. */
    HUNG
  }

  /** One outcome; {@code status} and {@code body} only for {@link Kind#ANSWERED}. */
  record Reply(Kind kind, int status, Map<String, String> headers, String body, long millis) {
    Optional<String> header(String name) {
      return Optional.ofNullable(headers.get(name.toLowerCase(Locale.ROOT)));
    }
  }

  /**
   * Sends {@code request} to {@code port} on loopback; with {@code halfClose} the client then shuts
   * its output, as a client that sent a truncated request and waits does.
   */
  static Reply exchange(int port, byte[] request, boolean halfClose, Duration bound) {
    long start = System.nanoTime();
    long deadline = start + bound.toNanos();
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", port), (int) bound.toMillis());
      socket.setSoTimeout((int) bound.toMillis());
      boolean written = write(socket.getOutputStream(), request);
      if (written && halfClose) {
        socket.shutdownOutput();
      }
      boolean head =
          new String(request, 0, Math.min(5, request.length), StandardCharsets.ISO_8859_1)
              .equals("HEAD ");
      return read(socket, new BufferedInputStream(socket.getInputStream()), head, deadline, start);
    } catch (SocketTimeoutException e) {
      return new Reply(Kind.HUNG, 0, Map.of(), "", elapsed(start));
    } catch (IOException e) {
      return new Reply(Kind.CLOSED, 0, Map.of(), e.toString(), elapsed(start));
    }
  }

  /** False when the server closed while the request was being written (it may have answered). */
  private static boolean write(OutputStream out, byte[] request) {
    try {
      out.write(request);
      out.flush();
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  private static Reply read(
      Socket socket, InputStream in, boolean headRequest, long deadline, long start)
      throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int state = 0;
    while (state < 4) {
      int b = readByte(socket, in, deadline);
      if (b < 0) {
        return new Reply(Kind.CLOSED, 0, Map.of(), "", elapsed(start));
      }
      head.write(b);
      state = nextState(state, b);
      if (head.size() > MAX_HEAD) {
        throw new IOException("reply head over " + MAX_HEAD + " bytes");
      }
    }
    String[] lines = head.toString(StandardCharsets.ISO_8859_1).split("\r\n");
    String[] statusLine = lines[0].split(" ", 3);
    int status = statusLine.length > 1 ? parseStatus(statusLine[1]) : 0;
    Map<String, String> headers = new LinkedHashMap<>();
    for (int i = 1; i < lines.length; i++) {
      int colon = lines[i].indexOf(':');
      if (colon > 0) {
        headers.put(
            lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT),
            lines[i].substring(colon + 1).trim());
      }
    }
    // An error's body is awaited to the bound; a success's only briefly (streams never end).
    long bodyDeadline =
        status >= 400 ? deadline : Math.min(deadline, System.nanoTime() + SUCCESS_BODY_NANOS);
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    boolean none = headRequest || status < 200 || status == 204 || status == 304;
    try {
      if (!none) {
        body(socket, in, headers, bodyDeadline, body);
      }
    } catch (SocketTimeoutException e) {
      if (status >= 400) {
        throw e;
      }
    } catch (IOException | NumberFormatException e) {
      // Closed or garbled after the status line: it answered; the body is what arrived.
    }
    return new Reply(
        Kind.ANSWERED, status, headers, body.toString(StandardCharsets.UTF_8), elapsed(start));
  }

  private static int parseStatus(String text) {
    try {
      return Integer.parseInt(text);
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /** CR LF CR LF, tolerating nothing else: the servers under test always send CR LF. */
  private static int nextState(int state, int b) {
    return switch (state) {
      case 0, 2 -> b == '\r' ? state + 1 : 0;
      case 1, 3 -> b == '\n' ? state + 1 : (b == '\r' ? 1 : 0);
      default -> state;
    };
  }

  private static void body(
      Socket socket,
      InputStream in,
      Map<String, String> headers,
      long end,
      ByteArrayOutputStream body)
      throws IOException {
    String length = headers.get("content-length");
    if (length != null) {
      long n = Long.parseLong(length.trim());
      for (long i = 0; i < Math.min(n, MAX_BODY); i++) {
        int b = readByte(socket, in, end);
        if (b < 0) {
          break;
        }
        body.write(b);
      }
    } else if ("chunked".equalsIgnoreCase(headers.getOrDefault("transfer-encoding", ""))) {
      readChunks(socket, in, body, end);
    } else {
      for (int b = readByte(socket, in, end); b >= 0 && body.size() < MAX_BODY; ) {
        body.write(b);
        b = readByte(socket, in, end);
      }
    }
  }

  private static void readChunks(
      Socket socket, InputStream in, ByteArrayOutputStream body, long end) throws IOException {
    while (body.size() < MAX_BODY) {
      String sizeLine = line(socket, in, end);
      int semicolon = sizeLine.indexOf(';');
      int size =
          Integer.parseInt(
              (semicolon < 0 ? sizeLine : sizeLine.substring(0, semicolon)).trim(), 16);
      if (size == 0) {
        return;
      }
      for (int i = 0; i < size; i++) {
        int b = readByte(socket, in, end);
        if (b < 0) {
          return;
        }
        body.write(b);
      }
      line(socket, in, end);
    }
  }

  private static String line(Socket socket, InputStream in, long end) throws IOException {
    StringBuilder line = new StringBuilder();
    for (int b = readByte(socket, in, end); b >= 0 && b != '\n'; b = readByte(socket, in, end)) {
      if (b != '\r') {
        line.append((char) b);
      }
    }
    return line.toString();
  }

  /** One byte, or -1 at the end; a timeout once {@code deadline} has passed. */
  private static int readByte(Socket socket, InputStream in, long deadline) throws IOException {
    long left = deadline - System.nanoTime();
    if (left <= 0) {
      throw new SocketTimeoutException("bound passed");
    }
    socket.setSoTimeout((int) Math.max(1, left / 1_000_000));
    return in.read();
  }

  private static long elapsed(long start) {
    return (System.nanoTime() - start) / 1_000_000;
  }
}
