package dev.paddock.http;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.util.Base64;

/** A hand-driven WebSocket client for the protocol violations the JDK client refuses to send. */
final class RawWebSocket implements AutoCloseable {
  record Frame(int opcode, byte[] payload) {}

  private final RawClient raw;

  private RawWebSocket(RawClient raw) {
    this.raw = raw;
  }

  static RawWebSocket open(int port, String path) throws IOException {
    RawClient raw = new RawClient(port);
    String key = Base64.getEncoder().encodeToString(new byte[16]);
    raw.send(
        "GET "
            + path
            + " HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: "
            + key
            + "\r\n\r\n");
    RawClient.Response response = raw.read(true);
    if (response.status() != 101) {
      raw.close();
      throw new IOException("upgrade refused: " + response.status());
    }
    if (!WebSocketHandshake.acceptFor(key).equals(response.header("Sec-WebSocket-Accept"))) {
      raw.close();
      throw new IOException("wrong Sec-WebSocket-Accept");
    }
    return new RawWebSocket(raw);
  }

  void sendFrame(int firstByte, boolean masked, byte[] payload) throws IOException {
    byte[] mask = {0x11, 0x22, 0x33, 0x44};
    java.io.ByteArrayOutputStream frame = new java.io.ByteArrayOutputStream();
    frame.write(firstByte);
    frame.write((masked ? 0x80 : 0) | payload.length);
    if (masked) {
      frame.write(mask);
    }
    for (int i = 0; i < payload.length; i++) {
      frame.write(masked ? payload[i] ^ mask[i & 3] : payload[i]);
    }
    raw.send(frame.toByteArray());
  }

  Frame readFrame() throws IOException {
    int b0 = raw.in.read();
    int b1 = raw.in.read();
    if (b0 < 0 || b1 < 0) {
      throw new java.io.EOFException();
    }
    int length = b1 & 0x7f;
    if (length == 126) {
      length = (raw.in.read() << 8) | raw.in.read();
    }
    return new Frame(b0 & 0x0f, raw.in.readNBytes(length));
  }

  /** Skips data frames up to the close frame and returns its code. */
  int readCloseCode() throws IOException {
    while (true) {
      Frame frame = readFrame();
      if (frame.opcode() == 0x8) {
        return ((frame.payload()[0] & 0xff) << 8) | (frame.payload()[1] & 0xff);
      }
    }
  }

  boolean endOfStream() throws IOException {
    try {
      return raw.in.read() < 0;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (java.net.SocketException e) {
      return true;
    }
  }

  @Override
  public void close() throws IOException {
    raw.close();
  }
}
