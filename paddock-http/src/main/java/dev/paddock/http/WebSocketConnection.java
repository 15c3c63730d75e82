package dev.paddock.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The server side of one WebSocket (RFC 6455) after the 101: reads frames on the connection's own
 * thread and calls the listener; sends from any thread under {@link #sendLock}. Enforces masked
 * client frames (1002), valid UTF-8 text (1007), the message size limit (1009), and answers pings.
 * A silent peer is pinged after the ping interval and dropped (1006) after a second one.
 */
final class WebSocketConnection implements WebSocket {
  private static final int CONTINUATION = 0x0;
  private static final int TEXT = 0x1;
  private static final int BINARY = 0x2;
  private static final int CLOSE = 0x8;
  private static final int PING = 0x9;
  private static final int PONG = 0xA;
  private static final long CLOSE_GRACE_NANOS = TimeUnit.SECONDS.toNanos(5);

  private final Socket socket;
  private final WireInput in;
  private final OutputStream out;
  private final WebSocketListener listener;
  private final HttpServerConfig config;

  /** Serialises frames: held for the whole of one frame's write and flush. */
  private final ReentrantLock sendLock = new ReentrantLock();

  private final AtomicBoolean closedReported = new AtomicBoolean();
  private volatile boolean closeSent; // written under sendLock
  private volatile long closeSentNanos; // 0 until this side sent a close frame
  private volatile int sentCode = 1006;
  private volatile String sentReason = "";
  private volatile boolean ended;

  // Reader-thread state: the message being assembled from fragments.
  private ByteArrayOutputStream message;
  private int messageType;

  WebSocketConnection(
      Connection connection,
      Socket socket,
      WireInput in,
      OutputStream out,
      WebSocketListener listener) {
    this.socket = socket;
    this.in = in;
    this.out = out;
    this.listener = listener;
    this.config = connection.config();
  }

  /** Serves the socket until it closes; calls {@code onClose} exactly once at the end. */
  void run() {
    int code = 1006;
    String reason = "connection lost";
    try {
      listener.onOpen(this);
      Ending ending = readLoop();
      code = ending.code();
      reason = ending.reason();
    } catch (RuntimeException e) {
      close(1011, "internal error");
      code = 1011;
      reason = "internal error";
    } finally {
      ended = true;
      PaddockHttpServer.closeQuietly(socket);
      if (closedReported.compareAndSet(false, true)) {
        listener.onClose(this, code, reason);
      }
    }
  }

  private record Ending(int code, String reason) {}

  private Ending readLoop() {
    in.timeout(config.webSocketPingInterval().toMillis());
    boolean pinged = false;
    while (true) {
      try {
        Ending ending = readFrame();
        pinged = false;
        if (ending != null) {
          return ending;
        }
      } catch (SocketTimeoutException e) {
        if (closeSentNanos != 0 || pinged) {
          return lost(closeSentNanos != 0 ? "no answer to the close frame" : "no answer to ping");
        }
        pinged = sendControl(PING, new byte[0]);
      } catch (FrameError e) {
        close(e.code, e.getMessage());
        return new Ending(e.code, e.getMessage());
      } catch (IOException e) {
        return lost("connection lost");
      }
    }
  }

  private Ending lost(String why) {
    return closeSentNanos != 0 ? new Ending(sentCode, sentReason) : new Ending(1006, why);
  }

  /** Reads one frame and acts on it; returns how the connection ended when this frame ended it. */
  private Ending readFrame() throws IOException {
    int b0 = readByte();
    int b1 = readByte();
    boolean fin = (b0 & 0x80) != 0;
    int opcode = b0 & 0x0f;
    if ((b0 & 0x70) != 0) {
      throw new FrameError(1002, "reserved bits set without a negotiated extension");
    }
    if ((b1 & 0x80) == 0) {
      throw new FrameError(1002, "client frames must be masked");
    }
    long length = payloadLength(b1 & 0x7f);
    boolean control = opcode >= 0x8;
    if (control && (!fin || length > 125)) {
      throw new FrameError(1002, "control frames must be final and at most 125 bytes");
    }
    checkSize(opcode, length);
    byte[] mask = new byte[4];
    in.readFully(mask, 0, 4);
    byte[] payload = new byte[(int) length];
    in.readFully(payload, 0, payload.length);
    for (int i = 0; i < payload.length; i++) {
      payload[i] ^= mask[i & 3];
    }
    return control ? onControl(opcode, payload) : onData(opcode, fin, payload);
  }

  private int readByte() throws IOException {
    int b = in.read();
    if (b < 0) {
      throw new java.io.EOFException("peer closed the connection");
    }
    return b;
  }

  private long payloadLength(int length7) throws IOException {
    if (length7 < 126) {
      return length7;
    }
    int bytes = length7 == 126 ? 2 : 8;
    long length = 0;
    for (int i = 0; i < bytes; i++) {
      length = (length << 8) | readByte();
    }
    if (length < 0) {
      throw new FrameError(1002, "payload length has its most significant bit set");
    }
    return length;
  }

  private void checkSize(int opcode, long length) throws FrameError {
    long sofar = opcode == CONTINUATION && message != null ? message.size() : 0;
    if (sofar + length > config.webSocketMaxMessageBytes()) {
      throw new FrameError(
          1009, "message larger than " + config.webSocketMaxMessageBytes() + " bytes");
    }
  }

  private Ending onData(int opcode, boolean fin, byte[] payload) throws IOException {
    if (opcode == CONTINUATION) {
      if (message == null) {
        throw new FrameError(1002, "continuation frame without a message to continue");
      }
      message.write(payload);
    } else if (opcode == TEXT || opcode == BINARY) {
      if (message != null) {
        throw new FrameError(1002, "new message started before the previous one ended");
      }
      messageType = opcode;
      if (fin) {
        deliver(opcode, payload);
        return null;
      }
      message = new ByteArrayOutputStream(Math.max(256, payload.length * 2));
      message.write(payload);
    } else {
      throw new FrameError(1002, "unknown opcode " + opcode);
    }
    if (fin) {
      byte[] whole = message.toByteArray();
      message = null;
      deliver(messageType, whole);
    }
    return null;
  }

  private void deliver(int type, byte[] data) throws FrameError {
    if (closeSentNanos != 0) {
      return; // after our close frame only the peer's close matters (RFC 6455 §5.5.1)
    }
    if (type == TEXT) {
      listener.onText(this, utf8(data, "text message"));
    } else {
      listener.onBinary(this, data);
    }
  }

  private static String utf8(byte[] data, String what) throws FrameError {
    try {
      return StandardCharsets.UTF_8
          .newDecoder()
          .onMalformedInput(CodingErrorAction.REPORT)
          .onUnmappableCharacter(CodingErrorAction.REPORT)
          .decode(ByteBuffer.wrap(data))
          .toString();
    } catch (CharacterCodingException e) {
      throw new FrameError(1007, what + " is not valid UTF-8");
    }
  }

  private Ending onControl(int opcode, byte[] payload) throws IOException {
    switch (opcode) {
      case PING -> sendControl(PONG, payload);
      case PONG -> {
        // Any frame proves the peer alive; the read loop already reset its ping state.
      }
      case CLOSE -> {
        return onClose(payload);
      }
      default -> throw new FrameError(1002, "unknown control opcode " + opcode);
    }
    return null;
  }

  private Ending onClose(byte[] payload) throws FrameError {
    if (payload.length == 1) {
      throw new FrameError(1002, "close frame with a 1-byte payload");
    }
    int code = payload.length == 0 ? 1005 : ((payload[0] & 0xff) << 8) | (payload[1] & 0xff);
    if (payload.length >= 2 && !validCloseCode(code)) {
      throw new FrameError(1002, "invalid close code " + code);
    }
    String reason = payload.length > 2 ? utf8(slice(payload, 2), "close reason") : "";
    if (closeSentNanos != 0) {
      return new Ending(sentCode, sentReason); // the peer answered our close
    }
    closeFrame(payload, code, reason); // echo the peer's code and reason (RFC 6455 §5.5.1)
    return new Ending(code, reason);
  }

  private static boolean validCloseCode(int code) {
    return (code >= 1000 && code <= 1003)
        || (code >= 1007 && code <= 1011)
        || (code >= 3000 && code <= 4999);
  }

  private static byte[] slice(byte[] data, int from) {
    byte[] part = new byte[data.length - from];
    System.arraycopy(data, from, part, 0, part.length);
    return part;
  }

  @Override
  public void sendText(String text) throws IOException {
    byte[] data = text.getBytes(StandardCharsets.UTF_8);
    send(TEXT, data, 0, data.length);
  }

  @Override
  public void sendBinary(byte[] data, int offset, int length) throws IOException {
    java.util.Objects.checkFromIndexSize(offset, length, data.length);
    send(BINARY, data, offset, length);
  }

  private void send(int opcode, byte[] data, int offset, int length) throws IOException {
    sendLock.lock();
    try {
      if (closeSent || ended) {
        throw new IOException("WebSocket is closed");
      }
      writeFrame(opcode, data, offset, length);
    } catch (IOException e) {
      PaddockHttpServer.closeQuietly(socket); // a half-written frame leaves the stream unusable
      throw e;
    } finally {
      sendLock.unlock();
    }
  }

  /** Sends a ping or pong; false when the socket is already unusable. */
  private boolean sendControl(int opcode, byte[] payload) {
    sendLock.lock();
    try {
      if (!closeSent) {
        writeFrame(opcode, payload, 0, payload.length);
      }
      return true;
    } catch (IOException e) {
      PaddockHttpServer.closeQuietly(socket);
      return false;
    } finally {
      sendLock.unlock();
    }
  }

  private void writeFrame(int opcode, byte[] data, int offset, int length) throws IOException {
    byte[] header;
    if (length < 126) {
      header = new byte[] {(byte) (0x80 | opcode), (byte) length};
    } else if (length < 65536) {
      header = new byte[] {(byte) (0x80 | opcode), 126, (byte) (length >>> 8), (byte) length};
    } else {
      header = new byte[10];
      header[0] = (byte) (0x80 | opcode);
      header[1] = 127;
      for (int i = 0; i < 8; i++) {
        header[9 - i] = (byte) (((long) length) >>> (8 * i));
      }
    }
    out.write(header);
    out.write(data, offset, length);
    out.flush();
  }

  @Override
  public void close(int code, String reason) {
    byte[] text = reason.getBytes(StandardCharsets.UTF_8);
    int n = Math.min(text.length, 123);
    while (n > 0 && n < text.length && (text[n] & 0xc0) == 0x80) {
      n--; // do not cut a UTF-8 sequence in half
    }
    byte[] payload = new byte[2 + n];
    payload[0] = (byte) (code >>> 8);
    payload[1] = (byte) code;
    System.arraycopy(text, 0, payload, 2, n);
    closeFrame(payload, code, new String(text, 0, n, StandardCharsets.UTF_8));
  }

  private void closeFrame(byte[] payload, int code, String reason) {
    sendLock.lock();
    try {
      if (closeSent || ended) {
        return;
      }
      closeSent = true;
      sentCode = code;
      sentReason = reason;
      closeSentNanos = System.nanoTime() | 1;
      writeFrame(CLOSE, payload, 0, payload.length);
    } catch (IOException e) {
      PaddockHttpServer.closeQuietly(socket);
    } finally {
      sendLock.unlock();
    }
  }

  /** Server stop: a close frame if the send lock is free right now, never a wait. */
  void goingAway() {
    if (sendLock.tryLock()) {
      try {
        close(1001, "server stopping");
      } finally {
        sendLock.unlock();
      }
    }
  }

  /** Whether this side's close frame has waited longer than the grace for the peer's answer. */
  boolean closeOverdue(long nowNanos) {
    long sent = closeSentNanos;
    return sent != 0 && !ended && nowNanos - sent > CLOSE_GRACE_NANOS;
  }

  @Override
  public boolean isOpen() {
    return !ended && !closeSent;
  }

  /** A protocol violation by the peer: answered with a close frame carrying {@link #code}. */
  private static final class FrameError extends IOException {
    private static final long serialVersionUID = 1L;

    private final int code;

    FrameError(int code, String message) {
      super(message);
      this.code = code;
    }
  }
}
