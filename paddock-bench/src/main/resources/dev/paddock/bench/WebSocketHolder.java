import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.MessageDigest;
import java.util.Base64;

/**
 * Run inside a sandbox by GatewayBench (java WebSocketHolder.java PORT_FILE): accepts WebSocket
 * upgrades on a loopback port it writes to PORT_FILE, answers each with 101 and then holds the
 * connection open, reading until the client goes. One virtual thread per connection.
 */
public class WebSocketHolder {
  private static final String GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

  public static void main(String[] args) throws Exception {
    ServerSocket server = new ServerSocket(0, 1024, InetAddress.getLoopbackAddress());
    Path file = Path.of(args[0]);
    Path temp = Path.of(args[0] + ".tmp");
    Files.writeString(temp, server.getLocalPort() + "\n");
    Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE);
    while (true) {
      Socket socket = server.accept();
      Thread.ofVirtual().start(() -> hold(socket));
    }
  }

  private static void hold(Socket socket) {
    try (socket) {
      InputStream in = socket.getInputStream();
      String key = "";
      StringBuilder line = new StringBuilder();
      while (true) {
        int b = in.read();
        if (b < 0) {
          return;
        }
        if (b != '\n') {
          line.append((char) b);
          continue;
        }
        String text = line.toString().strip();
        line.setLength(0);
        if (text.isEmpty()) {
          break;
        }
        if (text.regionMatches(true, 0, "Sec-WebSocket-Key:", 0, 18)) {
          key = text.substring(18).strip();
        }
      }
      byte[] digest =
          MessageDigest.getInstance("SHA-1")
              .digest((key + GUID).getBytes(StandardCharsets.US_ASCII));
      String reply =
          "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
              + "Sec-WebSocket-Accept: "
              + Base64.getEncoder().encodeToString(digest)
              + "\r\n\r\n";
      socket.getOutputStream().write(reply.getBytes(StandardCharsets.US_ASCII));
      socket.getOutputStream().flush();
      while (in.read() >= 0) {
        // Idle until the client closes.
      }
    } catch (Exception e) {
      // The client went away: nothing to report.
    }
  }
}
