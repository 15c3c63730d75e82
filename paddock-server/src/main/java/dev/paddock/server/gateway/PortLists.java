package dev.paddock.server.gateway;

import dev.paddock.http.Json;
import dev.paddock.store.SandboxRecord;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which ports a sandbox's own processes listen on, as its agent answers {@code GET /api/ports} with
 * the sandbox's session key (the agent matches {@code /proc/net/tcp*} inodes against its
 * descendants' fds). An answer is kept {@link #TTL_NANOS} per sandbox and record version (a pause,
 * resume or restart bumps the version, so a list is never one of an older runtime); a port missing
 * from a kept answer is asked again once, so a server that just started is found. Thread-safe: the
 * cache is a concurrent map; two requests may both ask, the later answer wins.
 */
final class PortLists {
  static final long TTL_NANOS = 1_000_000_000L;
  private static final int MAX_REPLY = 1 << 20;
  private static final int READ_MILLIS = 5_000;

  private final UpstreamPool pool;
  private final SandboxKeys keys;
  private final Map<String, Listed> cache = new ConcurrentHashMap<>();

  /** A port and the address it is bound to. */
  record Port(int port, String address) {}

  private record Listed(long version, long atNanos, List<Port> ports) {
    boolean has(int port) {
      return ports.stream().anyMatch(p -> p.port() == port);
    }
  }

  PortLists(UpstreamPool pool, SandboxKeys keys) {
    this.pool = pool;
    this.keys = keys;
  }

  /** Whether the sandbox listens on {@code port}: a fresh kept answer, else its agent's now. */
  boolean listens(SandboxRecord record, InetSocketAddress agent, int port) throws IOException {
    Listed kept = cache.get(record.id());
    if (kept != null
        && kept.version() == record.version()
        && System.nanoTime() - kept.atNanos() < TTL_NANOS
        && kept.has(port)) {
      return true;
    }
    return ask(record, agent).has(port);
  }

  /** The sandbox's listening ports, asked of its agent now. */
  List<Port> list(SandboxRecord record, InetSocketAddress agent) throws IOException {
    return ask(record, agent).ports();
  }

  private Listed ask(SandboxRecord record, InetSocketAddress agent) throws IOException {
    String key =
        keys.sessionKey(record.id())
            .orElseThrow(() -> new IOException("the sandbox has no current session key"));
    Listed listed = new Listed(record.version(), System.nanoTime(), parse(fetch(agent, key)));
    if (cache.size() > 100_000) {
      cache.clear(); // bounded: entries of sandboxes deleted elsewhere go eventually
    }
    cache.put(record.id(), listed);
    return listed;
  }

  /** One {@code GET /api/ports} on a fresh connection closed after the reply. */
  private byte[] fetch(InetSocketAddress agent, String key) throws IOException {
    try (Upstream upstream = pool.fresh(agent)) {
      upstream.readTimeout(READ_MILLIS);
      upstream.write(
          "GET /api/ports HTTP/1.1\r\nHost: "
              + agent.getHostString()
              + ":"
              + agent.getPort()
              + "\r\nX-Session-API-Key: "
              + key
              + "\r\nAccept: application/json\r\nConnection: close\r\n\r\n");
      upstream.output().flush();
      String status = upstream.readLine();
      long length = -1;
      for (String line = upstream.readLine(); !line.isEmpty(); line = upstream.readLine()) {
        String lower = line.toLowerCase(Locale.ROOT);
        if (lower.startsWith("content-length:")) {
          length = Long.parseLong(lower.substring(15).strip());
        }
      }
      byte[] body = body(upstream.input(), length);
      if (!status.startsWith("HTTP/1.1 200 ") && !status.equals("HTTP/1.1 200")) {
        throw new IOException(
            "its agent answered " + status + ": " + new String(body, StandardCharsets.UTF_8));
      }
      return body;
    } catch (NumberFormatException e) {
      throw new IOException("its agent sent a bad Content-Length", e);
    }
  }

  private static byte[] body(InputStream in, long length) throws IOException {
    if (length > MAX_REPLY) {
      throw new IOException("its agent's port list is larger than " + MAX_REPLY + " bytes");
    }
    if (length >= 0) {
      return in.readNBytes((int) length);
    }
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] buffer = new byte[8192];
    for (int r = in.read(buffer); r >= 0; r = in.read(buffer)) {
      if (out.size() + r > MAX_REPLY) {
        throw new IOException("its agent's port list is larger than " + MAX_REPLY + " bytes");
      }
      out.write(buffer, 0, r);
    }
    return out.toByteArray();
  }

  private static List<Port> parse(byte[] body) throws IOException {
    try {
      Object parsed = Json.parseAny(body);
      List<Port> ports = new ArrayList<>();
      if (parsed instanceof Map<?, ?> map && map.get("ports") instanceof List<?> items) {
        for (Object item : items) {
          port(item).ifPresent(ports::add);
        }
        return List.copyOf(ports);
      }
    } catch (RuntimeException e) {
      throw new IOException("its agent's port list is not JSON: " + e.getMessage(), e);
    }
    throw new IOException("its agent's port list has no 'ports' array");
  }

  private static Optional<Port> port(Object item) {
    if (item instanceof Map<?, ?> map
        && map.get("port") instanceof Number n
        && map.get("address") instanceof String address) {
      return Optional.of(new Port(n.intValue(), address));
    }
    return Optional.empty();
  }
}
