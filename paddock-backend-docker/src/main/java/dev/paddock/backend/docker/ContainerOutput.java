package dev.paddock.backend.docker;

import dev.paddock.backend.kit.protocol.ReadyLine;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.OptionalInt;

/**
 * Reads a container's multiplexed output stream (attach or logs without a TTY: frames of an 8-byte
 * header, stream type then big-endian length, then the payload) as lines, looking for the agent's
 * ready line, which carries the port it bound. Keeps the last lines for a failure's detail. Not
 * thread-safe: one reader.
 */
final class ContainerOutput {
  private static final int TAIL_LINES = 20;
  private static final int MAX_LINE = 4096;

  private final InputStream in;
  private final Deque<String> tail = new ArrayDeque<>();
  private final StringBuilder line = new StringBuilder();

  ContainerOutput(InputStream in) {
    this.in = in;
  }

  /**
   * Reads until the ready line (its port) or the end of the stream (empty: the container stopped or
   * the stream was closed under us).
   */
  OptionalInt awaitReady() throws IOException {
    byte[] header = new byte[8];
    while (readFully(header)) {
      int length =
          ((header[4] & 0xff) << 24)
              | ((header[5] & 0xff) << 16)
              | ((header[6] & 0xff) << 8)
              | (header[7] & 0xff);
      byte[] payload = new byte[Math.min(Math.max(length, 0), 1 << 20)];
      if (!readFully(payload)) {
        break;
      }
      skip(length - payload.length);
      OptionalInt port = feed(new String(payload, StandardCharsets.UTF_8));
      if (port.isPresent()) {
        return port;
      }
    }
    flushLine();
    return OptionalInt.empty();
  }

  /** Scans plain (not multiplexed) text, e.g. a TTY log; for tests and logs read whole. */
  static OptionalInt readyPort(String text) {
    OptionalInt port = OptionalInt.empty();
    for (String line : text.split("\n", -1)) {
      port = readyPortOf(line).isPresent() ? readyPortOf(line) : port;
    }
    return port;
  }

  /** The first ready line's port in plain text (a log read whole). */
  static OptionalInt firstReadyPort(String text) {
    return text.lines()
        .map(ContainerOutput::readyPortOf)
        .filter(OptionalInt::isPresent)
        .findFirst()
        .orElse(OptionalInt.empty());
  }

  private static OptionalInt readyPortOf(String line) {
    return ReadyLine.parse(line).map(r -> OptionalInt.of(r.port())).orElse(OptionalInt.empty());
  }

  /** Demultiplexes a whole logs body into text. */
  static String demultiplex(byte[] body) {
    return new String(demultiplexBytes(body), StandardCharsets.UTF_8);
  }

  /** Demultiplexes a whole logs body (frames of stdout and stderr) into the bytes printed. */
  static byte[] demultiplexBytes(byte[] body) {
    java.io.ByteArrayOutputStream text = new java.io.ByteArrayOutputStream(body.length);
    int i = 0;
    while (i + 8 <= body.length) {
      int length =
          ((body[i + 4] & 0xff) << 24)
              | ((body[i + 5] & 0xff) << 16)
              | ((body[i + 6] & 0xff) << 8)
              | (body[i + 7] & 0xff);
      int from = i + 8;
      int to = Math.min(body.length, from + Math.max(0, length));
      text.write(body, from, to - from);
      i = to;
    }
    return text.toByteArray();
  }

  /** The last lines read. */
  List<String> tail() {
    return List.copyOf(tail);
  }

  private OptionalInt feed(String text) {
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      if (c == '\n') {
        OptionalInt port = readyPortOf(flushLine());
        if (port.isPresent()) {
          return port;
        }
      } else if (c != '\r' && line.length() < MAX_LINE) {
        line.append(c);
      }
    }
    return OptionalInt.empty();
  }

  private String flushLine() {
    String done = line.toString();
    line.setLength(0);
    if (!done.isBlank()) {
      tail.addLast(done);
      if (tail.size() > TAIL_LINES) {
        tail.removeFirst();
      }
    }
    return done;
  }

  private boolean readFully(byte[] buffer) throws IOException {
    int off = 0;
    while (off < buffer.length) {
      int n = in.read(buffer, off, buffer.length - off);
      if (n < 0) {
        return false;
      }
      off += n;
    }
    return true;
  }

  private void skip(long n) throws IOException {
    while (n > 0) {
      long skipped = in.skip(n);
      if (skipped <= 0) {
        if (in.read() < 0) {
          return;
        }
        skipped = 1;
      }
      n -= skipped;
    }
  }
}
