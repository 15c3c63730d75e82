package dev.paddock.agent.pty;

import dev.paddock.agent.core.Signal;
import dev.paddock.http.Json;
import dev.paddock.http.WebSocket;
import dev.paddock.http.WebSocketListener;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * One viewer attached to a terminal over WebSocket (protocol in docs/API.md "Terminal WebSocket").
 * Binary frames in are typed into the terminal; text frames are JSON control messages. A sender
 * virtual thread per viewer follows the scrollback from the viewer's own offset, so a slow viewer
 * never holds up the terminal or other viewers: if it falls more than the scrollback behind, it is
 * told how many bytes it lost.
 */
final class TerminalSocket implements WebSocketListener {
  private static final int FRAME_BYTES = 64 << 10;

  private final Terminal terminal;
  private final long since;
  private volatile Thread sender;

  private TerminalSocket(Terminal terminal, long since) {
    this.terminal = terminal;
    this.since = since;
  }

  /**
   * @param since the first offset the viewer wants; empty: the oldest byte held
   */
  static WebSocketListener accept(Terminal terminal, Optional<Long> since) {
    return new TerminalSocket(terminal, since.orElse(terminal.output.start()));
  }

  @Override
  public void onOpen(WebSocket socket) {
    terminal.viewers.incrementAndGet();
    sender = Thread.ofVirtual().name("paddock-terminal-viewer").start(() -> send(socket));
  }

  private void send(WebSocket socket) {
    byte[] frame = new byte[FRAME_BYTES];
    try {
      Scrollback.Slice first = terminal.output.read(since, new byte[0]);
      socket.sendText(
          control(
              "connected",
              Map.of(
                  "id", terminal.id,
                  "offset", first.from(),
                  "skipped", first.skipped(),
                  "cols", terminal.info().cols(),
                  "rows", terminal.info().rows())));
      long cursor = first.from();
      while (true) {
        Scrollback.Slice slice = terminal.output.await(cursor, frame);
        if (slice.skipped() > 0) {
          socket.sendText(control("skipped", Map.of("bytes", slice.skipped())));
        }
        if (slice.length() > 0) {
          socket.sendBinary(frame, 0, slice.length());
        }
        cursor = slice.next();
        if (slice.ended()) {
          sendExit(socket);
          return;
        }
      }
    } catch (InterruptedException e) {
      // The viewer went away.
    } catch (IOException e) {
      socket.close(1011, "send failed");
    }
  }

  private void sendExit(WebSocket socket) throws IOException {
    socket.sendText(control("exit", Map.of("exit_code", terminal.exitCode().orElse(-1))));
    socket.close(1000, "terminal exited");
  }

  @Override
  public void onBinary(WebSocket socket, byte[] data) {
    type(socket, data);
  }

  private void type(WebSocket socket, byte[] data) {
    try {
      terminal.input(data);
    } catch (IOException e) {
      error(socket, e.getMessage());
    }
  }

  @Override
  public void onText(WebSocket socket, String text) {
    Map<String, Object> message;
    try {
      message = Json.parseObject(text.getBytes(StandardCharsets.UTF_8));
    } catch (RuntimeException e) {
      error(socket, "text frames must be JSON control messages; send input as binary frames");
      return;
    }
    Object type = message.get("type");
    switch (type instanceof String s ? s : "") {
      case "resize" -> resize(socket, message);
      case "signal" -> signal(socket, message);
      case "input" -> {
        if (message.get("data") instanceof String data) {
          type(socket, data.getBytes(StandardCharsets.UTF_8));
        } else {
          error(socket, "an input message needs a string 'data'");
        }
      }
      case "ping" -> trySend(socket, control("pong", Map.of()));
      default ->
          error(socket, "unknown message type " + type + "; one of resize, signal, input, ping");
    }
  }

  private void resize(WebSocket socket, Map<String, Object> message) {
    if (!(message.get("cols") instanceof Number cols)
        || !(message.get("rows") instanceof Number rows)) {
      error(socket, "a resize message needs numbers 'cols' and 'rows'");
      return;
    }
    try {
      terminal.resize(cols.intValue(), rows.intValue());
    } catch (IOException | IllegalArgumentException e) {
      error(socket, e.getMessage());
    }
  }

  private void signal(WebSocket socket, Map<String, Object> message) {
    Optional<Integer> number =
        message.get("signal") instanceof String name
            ? Signal.parse(name).map(Signal::number)
            : Optional.empty();
    if (number.isEmpty()) {
      error(socket, "a signal message needs 'signal', one of " + Signal.names());
      return;
    }
    terminal.signal(number.get());
  }

  private static void error(WebSocket socket, String detail) {
    trySend(socket, control("error", Map.of("detail", detail)));
  }

  private static void trySend(WebSocket socket, String text) {
    try {
      socket.sendText(text);
    } catch (IOException e) {
      // The connection is closing; onClose follows.
    }
  }

  private static String control(String type, Map<String, Object> fields) {
    Map<String, Object> message = new LinkedHashMap<>();
    message.put("type", type);
    message.putAll(fields);
    return Json.string(message);
  }

  @Override
  public void onClose(WebSocket socket, int code, String reason) {
    terminal.viewers.decrementAndGet();
    Thread running = sender;
    if (running != null) {
      running.interrupt();
    }
  }
}
