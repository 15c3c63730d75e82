package dev.paddock.backend.kit.protocol;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.UnknownHostException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/**
 * Asks an agent-server {@code GET /alive} over a raw socket (no client threads, no pool): true only
 * for a {@code 200} status line within the timeout. For backends telling RUNNING from STARTING.
 * Thread-safe.
 */
public final class AliveProbe {
  private static final InetAddress LOOPBACK = ipv4Loopback();

  private final int timeoutMillis;

  public AliveProbe(Duration timeout) {
    this.timeoutMillis = Math.toIntExact(Math.max(1, timeout.toMillis()));
  }

  /** The agent on 127.0.0.1:{@code port} answers. */
  public boolean answers(int port) {
    return answers(LOOPBACK, port);
  }

  /** The agent on {@code host}:{@code port} answers. */
  public boolean answers(String host, int port) {
    try {
      return answers(InetAddress.getByName(host), port);
    } catch (UnknownHostException e) {
      return false;
    }
  }

  private boolean answers(InetAddress address, int port) {
    if (port <= 0) {
      return false;
    }
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress(address, port), timeoutMillis);
      socket.setSoTimeout(timeoutMillis);
      OutputStream out = socket.getOutputStream();
      out.write(
          ("GET "
                  + AgentProtocol.ALIVE
                  + " HTTP/1.1\r\nHost: "
                  + address.getHostAddress()
                  + ":"
                  + port
                  + "\r\nConnection: close\r\n\r\n")
              .getBytes(StandardCharsets.US_ASCII));
      out.flush();
      return statusLine(socket.getInputStream()).matches("HTTP/1\\.[01] 200( .*)?");
    } catch (IOException e) {
      return false;
    }
  }

  /** 127.0.0.1, where agents listen (getLoopbackAddress() may answer ::1). */
  private static InetAddress ipv4Loopback() {
    try {
      return InetAddress.getByAddress("127.0.0.1", new byte[] {127, 0, 0, 1});
    } catch (UnknownHostException e) {
      throw new AssertionError("a literal address never needs a lookup", e);
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
