package dev.paddock.server.gateway;

import dev.paddock.http.ConnectionTakeover;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;

/**
 * An upgraded connection (WebSocket: PTY, bash events, watch) relayed byte for byte: the upstream's
 * 101 head as it sent it, then both directions until either side ends. Frames are not parsed, so
 * pings, fragmentation and close codes are the two ends' business. The client-to-upstream pump runs
 * on the connection's thread, upstream-to-client on one more virtual thread; when one direction
 * ends its half is shut down so the other can finish, and everything closes when both are done.
 */
final class Tunnel implements ConnectionTakeover {
  private final Upstream upstream;
  private final String replyHead;
  private final GatewayMetrics metrics;
  private final String template;

  Tunnel(Upstream upstream, String replyHead, GatewayMetrics metrics, String template) {
    this.upstream = upstream;
    this.replyHead = replyHead;
    this.metrics = metrics;
    this.template = template;
  }

  @Override
  public void run(InputStream clientIn, OutputStream clientOut) throws IOException {
    metrics.webSocketOpened(template);
    try {
      upstream.readTimeout(0); // an idle terminal is not a dead one; pings are the ends' business
      clientOut.write(replyHead.getBytes(StandardCharsets.ISO_8859_1));
      clientOut.flush();
      Thread down =
          Thread.ofVirtual()
              .name("paddock-gateway-tunnel")
              .start(() -> pumpQuietly(upstream.input(), clientOut, true));
      pumpQuietly(clientIn, upstream.output(), false);
      upstream.shutdownOutput();
      if (!join(down, 5_000)) {
        upstream.close(); // the sandbox ignored the client's end: cut it
        join(down, 5_000);
      }
    } finally {
      upstream.close();
      metrics.webSocketClosed(template);
    }
  }

  private void pumpQuietly(InputStream in, OutputStream out, boolean towardsClient) {
    byte[] buffer = new byte[8 << 10];
    try {
      int n;
      while ((n = in.read(buffer)) >= 0) {
        out.write(buffer, 0, n);
        if (in.available() == 0) {
          out.flush();
        }
        metrics.bytes(n);
      }
      out.flush();
    } catch (IOException e) {
      // One side went away: the other direction is ended below.
    }
    if (towardsClient) {
      // The sandbox ended: close the upstream so the client-side pump's write fails fast, and
      // the connection's socket is closed by the server when run returns.
      upstream.close();
      try {
        out.close();
      } catch (IOException e) {
        // Closing the client's socket output cannot be retried.
      }
    }
  }

  private static boolean join(Thread thread, long millis) {
    try {
      return thread.join(java.time.Duration.ofMillis(millis));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
