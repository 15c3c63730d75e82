package dev.paddock.backend.docker;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Asks an agent {@code GET /alive} over a raw socket (no client threads, no pool): true only for a
 * {@code 200} status line within the timeout. Thread-safe.
 */
final class AgentProbe {
  private final int timeoutMillis;

  AgentProbe(Duration timeout) {
    this.timeoutMillis = Math.toIntExact(Math.max(1, timeout.toMillis()));
  }

  boolean answers(String host, int port) {
    if (port <= 0) {
      return false;
    }
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(host, port), timeoutMillis);
      socket.setSoTimeout(timeoutMillis);
      OutputStream out = socket.getOutputStream();
      out.write(
          ("GET /alive HTTP/1.1\r\nHost: " + host + ":" + port + "\r\nConnection: close\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      return statusLine(socket.getInputStream()).matches("HTTP/1\\.[01] 200( .*)?");
    } catch (IOException e) {
      return false;
    }
  }

  private static String statusLine(InputStream in) throws IOException {
    StringBuilder line = new StringBuilder();
    for (int c; (c = in.read()) >= 0 && c != '\n' && line.length() < 256; ) {
      if (c != '\r') {
        line.append((char) c);
      }
    }
    return line.toString();
  }
}
