package dev.paddock.http;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** A raw-socket HTTP client for requests a well-behaved client library would never send. */
final class RawClient implements AutoCloseable {
  /** A parsed response; {@code status} -1 when the server closed without answering. */
  record Response(int status, Map<String, String> headers, String body) {
    String header(String name) {
      return headers.get(name.toLowerCase(Locale.ROOT));
    }
  }

  final Socket socket;
  final InputStream in;
  final OutputStream out;

  RawClient(int port, int readTimeoutMillis) throws IOException {
    socket = new Socket("127.0.0.1", port);
    socket.setSoTimeout(readTimeoutMillis);
    in = socket.getInputStream();
    out = socket.getOutputStream();
  }

  RawClient(int port) throws IOException {
    this(port, 5000);
  }

  RawClient send(String text) throws IOException {
    return send(text.getBytes(StandardCharsets.ISO_8859_1));
  }

  RawClient send(byte[] bytes) throws IOException {
    out.write(bytes);
    out.flush();
    return this;
  }

  String line() throws IOException {
    StringBuilder line = new StringBuilder();
    int b;
    while ((b = in.read()) >= 0 && b != '\n') {
      line.append((char) b);
    }
    if (b < 0 && line.isEmpty()) {
      return null;
    }
    return line.toString().replaceAll("\r$", "");
  }

  /** Reads one response (Content-Length or chunked body; HEAD: pass {@code head}). */
  Response read(boolean head) throws IOException {
    String status = line();
    if (status == null) {
      return new Response(-1, Map.of(), "");
    }
    Map<String, String> headers = new LinkedHashMap<>();
    String line;
    while ((line = line()) != null && !line.isEmpty()) {
      int colon = line.indexOf(':');
      headers.put(
          line.substring(0, colon).toLowerCase(Locale.ROOT), line.substring(colon + 1).trim());
    }
    int code = Integer.parseInt(status.split(" ")[1]);
    if (head || code == 100 || code == 101 || code == 204 || code == 304) {
      return new Response(code, headers, "");
    }
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    if (headers.containsKey("content-length")) {
      body.write(in.readNBytes(Integer.parseInt(headers.get("content-length"))));
    } else if ("chunked".equals(headers.get("transfer-encoding"))) {
      int size;
      while ((size = Integer.parseInt(line().split(";")[0].trim(), 16)) > 0) {
        body.write(in.readNBytes(size));
        line();
      }
      line();
    } else {
      body.write(in.readAllBytes());
    }
    return new Response(code, headers, body.toString(StandardCharsets.UTF_8));
  }

  Response read() throws IOException {
    return read(false);
  }

  /** Whether the server closed the connection (end of stream) within the read timeout. */
  boolean closedByServer() throws IOException {
    try {
      return in.read() < 0;
    } catch (SocketTimeoutException e) {
      return false;
    } catch (java.net.SocketException e) {
      return true; // reset counts as closed
    }
  }

  @Override
  public void close() throws IOException {
    socket.close();
  }
}
