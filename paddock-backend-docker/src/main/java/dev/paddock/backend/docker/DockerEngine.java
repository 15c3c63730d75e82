package dev.paddock.backend.docker;

import com.fasterxml.jackson.jr.ob.JSON;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.net.URI;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * A small client of the Docker Engine API: one connection per request over the engine's unix socket
 * ({@code unix:///var/run/docker.sock}, the default) or plain TCP ({@code tcp://host:port}; TLS is
 * not supported), HTTP/1.1 with {@code Connection: close}, JSON through jackson-jr. The API version
 * is negotiated once: the engine's own version from {@code GET /_ping}, capped at {@link #MAX_API},
 * and refused below {@link #MIN_API}.
 *
 * <p>Why our own: the backend needs a dozen endpoints plus a hijacked attach (to hand the agent its
 * key digests on standard input); a full client library would bring a dependency tree larger than
 * Paddock itself. Thread-safe: no shared connection.
 */
final class DockerEngine {
  /** API 1.41 is Docker 20.10, the oldest engine we test against. */
  static final String MIN_API = "1.41";

  /** The newest API whose fields we rely on; newer engines still serve it. */
  static final String MAX_API = "1.47";

  private static final int MAX_HEADER_BYTES = 64 * 1024;
  private static final int MAX_BODY_BYTES = 16 * 1024 * 1024;

  private final URI host;
  private final Duration timeout;
  private volatile String apiPrefix;

  private DockerEngine(URI host, Duration timeout) {
    this.host = host;
    this.timeout = timeout;
  }

  /**
   * A client of the engine at {@code dockerHost} ({@code unix:///path} or {@code tcp://host:port});
   * nothing is contacted yet.
   *
   * @throws IllegalArgumentException for any other scheme
   */
  static DockerEngine connect(String dockerHost, Duration timeout) {
    URI uri = URI.create(dockerHost);
    String scheme = Optional.ofNullable(uri.getScheme()).orElse("").toLowerCase(Locale.ROOT);
    if (!scheme.equals("unix") && !scheme.equals("tcp") && !scheme.equals("http")) {
      throw new IllegalArgumentException(
          "DOCKER_HOST '" + dockerHost + "' is not unix:///path or tcp://host:port");
    }
    return new DockerEngine(uri, timeout);
  }

  /** Where the engine is, for messages. */
  String host() {
    return host.toString();
  }

  /** A response: its status and body (already read; small JSON documents). */
  record Response(int status, Map<String, String> headers, byte[] body) {
    boolean ok() {
      return status >= 200 && status < 300;
    }

    String text() {
      return new String(body, StandardCharsets.UTF_8);
    }

    /** The body as a JSON object ({@code {}} when empty). */
    Map<String, Object> json() {
      if (body.length == 0) {
        return Map.of();
      }
      try {
        return JSON.std.mapFrom(body);
      } catch (IOException e) {
        throw new EngineException("the engine answered malformed JSON: " + e.getMessage(), e);
      }
    }

    /** The body as a JSON array of objects. */
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> jsonList() {
      try {
        return (List<Map<String, Object>>) (List<?>) JSON.std.listFrom(body);
      } catch (IOException e) {
        throw new EngineException("the engine answered malformed JSON: " + e.getMessage(), e);
      }
    }

    /** The engine's {@code message} for an error status, else the raw body. */
    String message() {
      try {
        Object message = json().get("message");
        return message != null ? message.toString() : text();
      } catch (RuntimeException e) {
        return text();
      }
    }
  }

  /** The engine could not be reached, or answered something that is not HTTP. */
  static final class EngineException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    EngineException(String message, Throwable cause) {
      super(message, cause);
    }
  }

  Response get(String path) {
    return call("GET", path, null);
  }

  Response post(String path, Object json) {
    return call("POST", path, json);
  }

  Response delete(String path) {
    return call("DELETE", path, null);
  }

  /** One request with a JSON body (or none); the response body is read whole. */
  Response call(String method, String path, Object json) {
    return call(
        method,
        path,
        json == null ? new byte[0] : jsonBytes(json),
        json == null ? null : "application/json");
  }

  /** One request with a raw body of {@code contentType} (e.g. a tar to import). */
  Response call(String method, String path, byte[] body, String contentType) {
    return call(method, path, body, contentType, timeout);
  }

  /**
   * One request that must be answered within {@code limit}: an engine that hangs is then reported
   * as unreachable instead of holding the caller forever (the connection is closed under it).
   */
  Response call(String method, String path, byte[] body, String contentType, Duration limit) {
    // Negotiated before this call's connection opens, so no connection is held idle meanwhile.
    String target = versioned(path);
    Socket socket = open();
    Deadline deadline = new Deadline(socket, limit);
    try (socket) {
      OutputStream out = socket.getOutputStream();
      out.write(requestHead(method, target, body.length, contentType));
      out.write(body);
      out.flush();
      InputStream in = new BufferedInputStream(socket.getInputStream());
      Head head = readHead(in);
      byte[] content = method.equals("HEAD") ? new byte[0] : readBody(in, head);
      return new Response(head.status, head.headers, content);
    } catch (IOException e) {
      throw unreachable(e);
    } finally {
      deadline.close();
    }
  }

  private static final java.util.concurrent.ScheduledThreadPoolExecutor DEADLINES =
      deadlineScheduler();

  private static java.util.concurrent.ScheduledThreadPoolExecutor deadlineScheduler() {
    var scheduler =
        new java.util.concurrent.ScheduledThreadPoolExecutor(
            1,
            r -> {
              Thread t = new Thread(r, "paddock-docker-deadlines");
              t.setDaemon(true);
              return t;
            });
    scheduler.setRemoveOnCancelPolicy(true); // cancelled alarms do not pile up for 60 s
    return scheduler;
  }

  /** Closes a connection whose call outlives its limit, which ends the blocked read. */
  private static final class Deadline implements Closeable {
    private final java.util.concurrent.ScheduledFuture<?> alarm;

    Deadline(Socket socket, Duration limit) {
      this.alarm =
          DEADLINES.schedule(
              () -> closeQuietly(socket),
              Math.max(1, limit.toMillis()),
              java.util.concurrent.TimeUnit.MILLISECONDS);
    }

    @Override
    public void close() {
      alarm.cancel(false);
    }
  }

  /**
   * {@code POST path} upgraded to a raw stream (attach): the returned stream is the container's
   * multiplexed output; {@link Hijacked#input()} writes to its standard input.
   *
   * @throws EngineException when the engine refuses the upgrade
   */
  Hijacked hijack(String path) {
    String target = versioned(path);
    Socket socket = open();
    try {
      OutputStream out = socket.getOutputStream();
      out.write(requestHead("POST", target, 0, null, true));
      out.flush();
      InputStream in = new BufferedInputStream(socket.getInputStream());
      Deadline deadline = new Deadline(socket, timeout);
      Head head;
      try {
        head = readHead(in);
      } finally {
        deadline.close();
      }
      if (head.status != 101 && head.status != 200) {
        byte[] content = readBody(in, head);
        socket.close();
        throw new EngineException(
            "attach refused: "
                + head.status
                + " "
                + new Response(head.status, head.headers, content).message(),
            null);
      }
      return new Hijacked(socket, in, out);
    } catch (IOException e) {
      closeQuietly(socket);
      throw unreachable(e);
    }
  }

  /** A raw connection after an upgrade. */
  record Hijacked(Socket socket, InputStream output, OutputStream input) implements Closeable {
    /** Closes our sending half: the engine closes the container's stdin (StdinOnce). */
    void closeInput() throws IOException {
      input.flush();
      if (socket.getChannel() != null) {
        socket.getChannel().shutdownOutput();
      } else {
        socket.shutdownOutput();
      }
    }

    @Override
    public void close() {
      closeQuietly(socket);
    }
  }

  /** The negotiated {@code /v1.xx} prefix, asked once. */
  private String versioned(String path) {
    String prefix = apiPrefix;
    if (prefix == null) {
      prefix = negotiate();
      apiPrefix = prefix;
    }
    return prefix + path;
  }

  private String negotiate() {
    Socket socket = open();
    Deadline deadline = new Deadline(socket, timeout);
    try (socket) {
      OutputStream out = socket.getOutputStream();
      out.write(requestHead("GET", "/_ping", 0, null, false));
      out.flush();
      InputStream in = new BufferedInputStream(socket.getInputStream());
      Head head = readHead(in);
      String version = head.headers.getOrDefault("api-version", MIN_API);
      if (compare(version, MIN_API) < 0) {
        throw new EngineException(
            "the engine at " + host + " speaks API " + version + "; Paddock needs " + MIN_API,
            null);
      }
      return "/v" + (compare(version, MAX_API) > 0 ? MAX_API : version);
    } catch (IOException | NumberFormatException e) {
      throw unreachable(new IOException(e.getMessage(), e));
    } finally {
      deadline.close();
    }
  }

  static int compare(String a, String b) {
    String[] x = a.split("\\.");
    String[] y = b.split("\\.");
    for (int i = 0; i < Math.max(x.length, y.length); i++) {
      int p = i < x.length ? Integer.parseInt(x[i]) : 0;
      int q = i < y.length ? Integer.parseInt(y[i]) : 0;
      if (p != q) {
        return Integer.compare(p, q);
      }
    }
    return 0;
  }

  private Socket open() {
    try {
      if (host.getScheme().equalsIgnoreCase("unix")) {
        SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX);
        try {
          channel.connect(UnixDomainSocketAddress.of(host.getPath()));
        } catch (IOException e) {
          channel.close();
          throw e;
        }
        return new ChannelSocket(channel);
      }
      Socket socket = new Socket();
      SocketAddress address =
          new InetSocketAddress(host.getHost(), host.getPort() > 0 ? host.getPort() : 2375);
      socket.connect(address, Math.toIntExact(timeout.toMillis()));
      socket.setTcpNoDelay(true);
      return socket;
    } catch (IOException e) {
      throw unreachable(e);
    }
  }

  private EngineException unreachable(IOException e) {
    return new EngineException("cannot talk to the Docker Engine at " + host + ": " + e, e);
  }

  private byte[] requestHead(String method, String path, int length, String contentType) {
    return requestHead(method, path, length, contentType, false);
  }

  private byte[] requestHead(
      String method, String path, int length, String contentType, boolean upgrade) {
    StringBuilder head = new StringBuilder();
    head.append(method).append(' ').append(path).append(" HTTP/1.1\r\n");
    head.append("Host: docker\r\n");
    head.append("User-Agent: paddock\r\n");
    if (upgrade) {
      head.append("Connection: Upgrade\r\nUpgrade: tcp\r\n");
    } else {
      head.append("Connection: close\r\n");
    }
    if (contentType != null) {
      head.append("Content-Type: ").append(contentType).append("\r\n");
    }
    if (length > 0 || method.equals("POST")) {
      head.append("Content-Length: ").append(length).append("\r\n");
    }
    head.append("\r\n");
    return head.toString().getBytes(StandardCharsets.UTF_8);
  }

  private static byte[] jsonBytes(Object json) {
    try {
      return JSON.std.asBytes(json);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private record Head(int status, Map<String, String> headers) {
    boolean chunked() {
      return headers
          .getOrDefault("transfer-encoding", "")
          .toLowerCase(Locale.ROOT)
          .contains("chunked");
    }

    long contentLength() {
      String value = headers.get("content-length");
      return value == null ? -1 : Long.parseLong(value.trim());
    }
  }

  private static Head readHead(InputStream in) throws IOException {
    String statusLine = readLine(in);
    if (statusLine == null || !statusLine.startsWith("HTTP/1.")) {
      throw new IOException("not an HTTP response: " + statusLine);
    }
    String[] parts = statusLine.split(" ", 3);
    int status;
    try {
      status = Integer.parseInt(parts[1]);
    } catch (NumberFormatException | ArrayIndexOutOfBoundsException e) {
      throw new IOException("not an HTTP status line: " + statusLine, e);
    }
    Map<String, String> headers = new LinkedHashMap<>();
    int total = statusLine.length();
    for (String line; (line = readLine(in)) != null && !line.isEmpty(); ) {
      total += line.length();
      if (total > MAX_HEADER_BYTES) {
        throw new IOException("response headers too large");
      }
      int colon = line.indexOf(':');
      if (colon > 0) {
        headers.put(
            line.substring(0, colon).trim().toLowerCase(Locale.ROOT),
            line.substring(colon + 1).trim());
      }
    }
    return new Head(status, headers);
  }

  private static byte[] readBody(InputStream in, Head head) throws IOException {
    if (head.status == 204 || head.status == 304 || head.status == 101) {
      return new byte[0];
    }
    InputStream body = head.chunked() ? new ChunkedInputStream(in) : in;
    long length = head.chunked() ? -1 : head.contentLength();
    ByteArrayOutputStream buffer = new ByteArrayOutputStream();
    byte[] chunk = new byte[8192];
    long remaining = length < 0 ? Long.MAX_VALUE : length;
    while (remaining > 0) {
      int n = body.read(chunk, 0, (int) Math.min(chunk.length, remaining));
      if (n < 0) {
        break;
      }
      buffer.write(chunk, 0, n);
      remaining -= n;
      if (buffer.size() > MAX_BODY_BYTES) {
        throw new IOException("response body over " + MAX_BODY_BYTES + " bytes");
      }
    }
    return buffer.toByteArray();
  }

  static String readLine(InputStream in) throws IOException {
    StringBuilder line = new StringBuilder();
    int c;
    while ((c = in.read()) >= 0) {
      if (c == '\n') {
        int end = line.length();
        if (end > 0 && line.charAt(end - 1) == '\r') {
          line.setLength(end - 1);
        }
        return line.toString();
      }
      line.append((char) c);
      if (line.length() > MAX_HEADER_BYTES) {
        throw new IOException("line too long");
      }
    }
    return line.isEmpty() ? null : line.toString();
  }

  private static void closeQuietly(Closeable closeable) {
    try {
      closeable.close();
    } catch (IOException ignored) {
      // Closing a connection we are done with: nothing to do.
    }
  }

  /** HTTP/1.1 chunked transfer decoding. */
  static final class ChunkedInputStream extends InputStream {
    private final InputStream in;
    private long left;
    private boolean done;

    ChunkedInputStream(InputStream in) {
      this.in = in;
    }

    @Override
    public int read() throws IOException {
      byte[] one = new byte[1];
      int n = read(one, 0, 1);
      return n < 0 ? -1 : one[0] & 0xff;
    }

    @Override
    public int read(byte[] b, int off, int len) throws IOException {
      if (done) {
        return -1;
      }
      if (left == 0) {
        String size = readLine(in);
        if (size == null) {
          done = true;
          return -1;
        }
        if (size.isEmpty()) {
          size = readLine(in);
          if (size == null) {
            done = true;
            return -1;
          }
        }
        int semicolon = size.indexOf(';');
        try {
          left = Long.parseLong((semicolon >= 0 ? size.substring(0, semicolon) : size).trim(), 16);
        } catch (NumberFormatException e) {
          throw new IOException("malformed chunk size: " + size, e);
        }
        if (left == 0) {
          done = true;
          return -1;
        }
      }
      int n = in.read(b, off, (int) Math.min(len, left));
      if (n < 0) {
        done = true;
        return -1;
      }
      left -= n;
      return n;
    }
  }

  /** A unix-domain SocketChannel behind the {@link Socket} API this class speaks. */
  private static final class ChannelSocket extends Socket {
    private final SocketChannel channel;
    private final InputStream in;
    private final OutputStream out;

    ChannelSocket(SocketChannel channel) {
      this.channel = channel;
      this.in = Channels.newInputStream(channel);
      this.out = Channels.newOutputStream(channel);
    }

    @Override
    public SocketChannel getChannel() {
      return channel;
    }

    @Override
    public InputStream getInputStream() {
      return in;
    }

    @Override
    public OutputStream getOutputStream() {
      return out;
    }

    @Override
    public void shutdownOutput() throws IOException {
      channel.shutdownOutput();
    }

    @Override
    public synchronized void close() throws IOException {
      channel.close();
    }
  }
}
