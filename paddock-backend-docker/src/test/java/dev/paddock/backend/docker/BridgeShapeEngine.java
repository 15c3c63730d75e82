package dev.paddock.backend.docker;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.jr.ob.JSON;
import java.io.BufferedInputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.StandardProtocolFamily;
import java.net.URI;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A translating proxy in front of the real Docker Engine, so that a backend configured for bridge
 * networking ({@code docker.network=bridge}, the default outside tests) runs real containers on a
 * machine whose tests may send traffic to loopback only.
 *
 * <p>What is real: the engine, every container, volume and image, the agent in each container, and
 * every field of every request but the network ones below. What is translated, and why: a started
 * bridge-mode container is reached through the engine's proxy, which forwards a published loopback
 * port to the container's address on the bridge (172.17.x), an address our tests must not send to.
 * So each container create is first checked to be bridge-shaped exactly as the backend sends it to
 * a bridge engine ({@code NetworkMode bridge}; the agent's and worker ports exposed and bound on
 * {@code 127.0.0.1} with {@code HostPort ""}, the engine's choice; {@code ExtraHosts
 * host.docker.internal:host-gateway}; the agent on {@code --host 0.0.0.0 --port 8000}), then
 * rewritten into host networking with the agent on {@code 127.0.0.1} and a free loopback port in
 * place of 8000: that port is what a bridge engine would have published. Inspect and list replies
 * then show the container as a bridge engine would: {@code NetworkMode bridge}, the create's own
 * {@code Cmd}, {@code ExposedPorts} and {@code PortBindings}, and {@code NetworkSettings.Ports}
 * mapping {@code 8000/tcp} to {@code 127.0.0.1:<that port>} while it runs. Worker ports get free
 * loopback ports in those replies too, but nothing forwards them (a worker on 12000 in a
 * host-networked container listens on the host's 12000); the contracts never connect to a worker.
 * {@code NetworkSettings.Networks} still names the host network; the backend does not read it.
 *
 * <p>Everything else (ping, version, info, images, start, stop, pause, unpause, rename, logs,
 * stats, removal, volumes and the hijacked attach that hands the agent its key digests) is relayed
 * byte for byte, streamed both ways, half-closes included (a hijacked attach the backend has closed
 * is drained until the engine ends it, at the latest when the container stops). A create that is
 * not bridge-shaped is refused (400) and recorded, as is any request the proxy does not know:
 * {@link #assertBridgeShapedAndUnderstood()} fails on either. {@code
 * PADDOCK_TEST_DOCKER_BRIDGE=true} still runs {@code BridgeModeTest}'s untranslated start on
 * machines that allow it.
 *
 * <p>Threads: one platform thread accepts, each connection is served on a virtual thread, plus one
 * more for the client-to-engine half of a relayed request. The translations are in concurrent maps;
 * the free-port choice binds and closes, so another process could take a port in between.
 */
final class BridgeShapeEngine implements Closeable {
  private static final String LOOPBACK = "127.0.0.1";
  private static final Pattern TARGET = Pattern.compile("^(/v\\d+\\.\\d+)?(/[^?]*)(\\?.*)?$");
  private static final Pattern CONTAINER_CALL =
      Pattern.compile(
          "/containers/[^/]+/(start|stop|pause|unpause|kill|restart|rename|wait|attach|logs"
              + "|stats|top|archive)");
  private static final List<String> KNOWN =
      List.of(
          "(GET|HEAD) /_ping",
          "GET /version",
          "GET /info",
          "GET /images/.+/json",
          "POST /images/create",
          "POST /images/.+/tag",
          "DELETE /images/.+",
          "DELETE /containers/[^/]+",
          "POST /volumes/create",
          "GET /volumes",
          "GET /volumes/[^/]+",
          "DELETE /volumes/[^/]+");

  private final String upstream;
  private final List<Integer> ports;
  private final ServerSocket server;
  private final Thread acceptor;
  private final Set<Closeable> open = ConcurrentHashMap.newKeySet();
  private final Map<String, Translation> byId = new ConcurrentHashMap<>();
  private final Set<Integer> taken = ConcurrentHashMap.newKeySet();
  private final List<String> problems = new CopyOnWriteArrayList<>();
  private final Set<Integer> agentPorts = ConcurrentHashMap.newKeySet();
  private final AtomicInteger creates = new AtomicInteger();
  private final AtomicInteger rewrittenReplies = new AtomicInteger();

  /**
   * What a create asked for and what the engine got instead.
   *
   * @param published container port to the loopback port shown as its published host port
   * @param asked the create's network fields as the backend sent them
   */
  private record Translation(Map<Integer, Integer> published, Map<String, Object> asked) {}

  private BridgeShapeEngine(String upstreamSocket, List<Integer> ports) throws IOException {
    this.upstream = upstreamSocket;
    this.ports = List.copyOf(ports);
    this.server = new ServerSocket(0, 50, InetAddress.getByName(LOOPBACK));
    this.acceptor = new Thread(this::accept, "bridge-shape-engine");
    this.acceptor.setDaemon(true);
    this.acceptor.start();
  }

  /**
   * A proxy on a loopback port in front of the engine at {@code dockerHost} (a {@code unix://}
   * socket), expecting creates to expose exactly {@code ports} (the agent's 8000 first, then the
   * workers').
   */
  static BridgeShapeEngine start(String dockerHost, List<Integer> ports) {
    URI uri = URI.create(dockerHost);
    if (!"unix".equalsIgnoreCase(uri.getScheme())) {
      throw new IllegalArgumentException(
          "the bridge-shape proxy relays to a unix socket only, not " + dockerHost);
    }
    try {
      return new BridgeShapeEngine(uri.getPath(), ports);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The backend settings that send every engine call through this proxy in bridge mode. */
  Map<String, String> settings() {
    return Map.of(
        "docker.host",
        "tcp://" + LOOPBACK + ":" + server.getLocalPort(),
        "docker.network",
        "bridge");
  }

  /** The loopback ports shown as published for the agent's port, one per translated create. */
  Set<Integer> publishedAgentPorts() {
    return Set.copyOf(agentPorts);
  }

  /**
   * Records what a check outside the proxy found wrong; {@link #assertBridgeShapedAndUnderstood}
   * fails on it.
   */
  void record(String problem) {
    problems.add(problem);
  }

  /** Fails when a create was not bridge-shaped or a request was not understood. */
  void assertBridgeShapedAndUnderstood() {
    // Taken, so that each test answers for what happened during it.
    List<String> seen = List.copyOf(problems);
    problems.removeAll(seen);
    assertThat(seen).as("what the bridge-shape proxy refused, did not know or saw wrong").isEmpty();
  }

  /** Also fails when nothing went through the proxy: a suite that bypassed it proves nothing. */
  void assertTranslatedSome() {
    assertBridgeShapedAndUnderstood();
    assertThat(creates.get()).as("bridge-shaped creates translated").isPositive();
    assertThat(rewrittenReplies.get()).as("inspect/list replies shown as bridge").isPositive();
  }

  @Override
  public void close() {
    closeQuietly(server);
    open.forEach(BridgeShapeEngine::closeQuietly);
    try {
      acceptor.join(Duration.ofSeconds(10));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  // ---------------------------------------------------------------- connections

  private void accept() {
    while (!server.isClosed()) {
      try {
        Socket client = server.accept();
        open.add(client);
        Thread.ofVirtual().name("bridge-shape-connection").start(() -> serve(client));
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  private void serve(Socket client) {
    try (client;
        SocketChannel engine = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      open.add(engine);
      engine.connect(UnixDomainSocketAddress.of(upstream));
      InputStream in = new BufferedInputStream(client.getInputStream());
      Head request = Head.read(in);
      if (request == null) {
        return;
      }
      route(request, in, client, engine);
    } catch (IOException e) {
      // The backend closed first (e.g. its deadline hit) or the engine went away: the backend sees
      // the same as it would without us.
    } catch (RuntimeException e) {
      problems.add("proxy failure: " + e);
    } finally {
      open.remove(client);
      open.removeIf(c -> c instanceof SocketChannel channel && !channel.isOpen());
    }
  }

  private void route(Head request, InputStream in, Socket client, SocketChannel engine)
      throws IOException {
    Matcher target = TARGET.matcher(request.target());
    String path = target.matches() ? target.group(2) : request.target();
    String call = request.method() + " " + path;
    OutputStream toClient = client.getOutputStream();
    if (!request.closes() && !request.upgrades()) {
      // A kept-alive connection would carry later requests past our reading.
      problems.add(call + ": neither Connection: close nor Upgrade");
    }
    if (call.equals("POST /containers/create")) {
      create(request, in, toClient, engine);
    } else if (call.equals("GET /containers/json")) {
      reply(request, toClient, engine, this::bridgeList);
    } else if (call.matches("GET /containers/[^/]+/json")) {
      reply(request, toClient, engine, this::bridgeInspect);
    } else {
      if (!known(request.method(), path)) {
        problems.add("not understood: " + call);
      }
      relay(request, in, client, engine);
    }
  }

  private static boolean known(String method, String path) {
    String call = method + " " + path;
    return KNOWN.stream().anyMatch(call::matches)
        || (method.equals("POST") || method.equals("GET") || method.equals("PUT"))
            && CONTAINER_CALL.matcher(path).matches();
  }

  /** Byte for byte both ways; each side's end of input becomes a half-close of the other. */
  private static void relay(Head request, InputStream in, Socket client, SocketChannel engine)
      throws IOException {
    OutputStream toEngine = Channels.newOutputStream(engine);
    toEngine.write(request.raw());
    toEngine.flush();
    Thread up =
        Thread.ofVirtual()
            .name("bridge-shape-upstream")
            .start(
                () -> {
                  try {
                    in.transferTo(toEngine);
                    engine.shutdownOutput();
                  } catch (IOException e) {
                    // The exchange ended from the engine's side: nothing more to send.
                  }
                });
    try {
      Channels.newInputStream(engine).transferTo(client.getOutputStream());
      client.shutdownOutput();
      up.join(Duration.ofSeconds(30)); // until the backend closes its side too
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  // ---------------------------------------------------------------- create

  private void create(Head request, InputStream in, OutputStream toClient, SocketChannel engine)
      throws IOException {
    Map<String, Object> body = JSON.std.mapFrom(request.body(in));
    List<String> wrong = bridgeShapeProblems(body);
    if (!wrong.isEmpty()) {
      problems.add("create " + request.target() + " is not bridge-shaped: " + wrong);
      answer(toClient, 400, "{\"message\":\"bridge-shape proxy: " + wrong.size() + " problems\"}");
      return;
    }
    Map<Integer, Integer> published = new LinkedHashMap<>();
    ports.forEach(port -> published.put(port, freeLoopbackPort()));
    agentPorts.add(published.get(ports.get(0)));
    Map<String, Object> asked = networkFields(body);
    byte[] translated = JSON.std.asBytes(hostNetworked(body, published.get(ports.get(0))));
    Response response = exchange(request.withBody(translated), engine);
    if (response.status() == 201) {
      String id = String.valueOf(JSON.std.mapFrom(response.body()).get("Id"));
      byId.put(id, new Translation(Map.copyOf(published), asked));
      creates.incrementAndGet();
    }
    response.writeTo(toClient, response.body());
  }

  /** Every way {@code body} differs from the backend's bridge-mode create. */
  private List<String> bridgeShapeProblems(Map<String, Object> body) {
    List<String> wrong = new ArrayList<>();
    Map<String, Object> host = ContainerState.map(body.get("HostConfig"));
    Map<String, Object> labels = ContainerState.map(body.get("Labels"));
    Set<String> keys = new HashSet<>();
    ports.forEach(port -> keys.add(port + "/tcp"));
    expect(wrong, "NetworkMode", "bridge", host.get("NetworkMode"));
    expect(wrong, "label paddock.network", "bridge", labels.get(ContainerSpec.LABEL_NETWORK));
    if (labels.containsKey(AgentServerLaunch.LABEL_AGENT_SERVER)) {
      wrong.add("an image's own agent-server: its ports are not translated");
    }
    expect(wrong, "ExposedPorts", keys, ContainerState.map(body.get("ExposedPorts")).keySet());
    Map<String, Object> bindings = ContainerState.map(host.get("PortBindings"));
    expect(wrong, "PortBindings ports", keys, bindings.keySet());
    List<Object> engineChosen = List.of(Map.of("HostIp", LOOPBACK, "HostPort", ""));
    bindings.forEach((port, binding) -> expect(wrong, "binding of " + port, engineChosen, binding));
    expect(
        wrong, "ExtraHosts", List.of("host.docker.internal:host-gateway"), host.get("ExtraHosts"));
    List<String> cmd = strings(body.get("Cmd"));
    expect(wrong, "--host", "0.0.0.0", after(cmd, "--host"));
    expect(wrong, "--port", Integer.toString(ports.get(0)), after(cmd, "--port"));
    return wrong;
  }

  private static void expect(List<String> wrong, String what, Object expected, Object actual) {
    if (!expected.equals(actual)) {
      wrong.add(what + " is " + actual + ", not " + expected);
    }
  }

  private static Map<String, Object> networkFields(Map<String, Object> body) {
    Map<String, Object> host = ContainerState.map(body.get("HostConfig"));
    Map<String, Object> asked = new LinkedHashMap<>();
    asked.put("Cmd", body.get("Cmd"));
    asked.put("ExposedPorts", body.get("ExposedPorts"));
    asked.put("NetworkMode", host.get("NetworkMode"));
    asked.put("PortBindings", host.get("PortBindings"));
    return asked;
  }

  /** The create as host networking allows it: no published ports, the agent on loopback. */
  private static Map<String, Object> hostNetworked(Map<String, Object> body, int agentPort) {
    Map<String, Object> copy = new LinkedHashMap<>(body);
    Map<String, Object> host = new LinkedHashMap<>(ContainerState.map(body.get("HostConfig")));
    host.put("NetworkMode", "host");
    host.remove("PortBindings");
    copy.remove("ExposedPorts");
    copy.put("HostConfig", host);
    List<String> cmd = new ArrayList<>(strings(body.get("Cmd")));
    cmd.set(cmd.indexOf("--host") + 1, LOOPBACK);
    cmd.set(cmd.indexOf("--port") + 1, Integer.toString(agentPort));
    copy.put("Cmd", cmd);
    return copy;
  }

  private int freeLoopbackPort() {
    while (true) {
      try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getByName(LOOPBACK))) {
        if (taken.add(probe.getLocalPort())) {
          return probe.getLocalPort();
        }
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
  }

  // ---------------------------------------------------------------- inspect and list

  private interface Rewrite {
    byte[] apply(byte[] body) throws IOException;
  }

  private void reply(Head request, OutputStream toClient, SocketChannel engine, Rewrite rewrite)
      throws IOException {
    Response response = exchange(request.withBody(new byte[0]), engine);
    byte[] body = response.status() == 200 ? rewrite.apply(response.body()) : response.body();
    response.writeTo(toClient, body);
  }

  private byte[] bridgeInspect(byte[] body) throws IOException {
    Map<String, Object> inspect = new LinkedHashMap<>(JSON.std.mapFrom(body));
    Translation translation = byId.get(String.valueOf(inspect.get("Id")));
    if (translation == null) {
      return body; // not created through this proxy
    }
    Map<String, Object> state = ContainerState.map(inspect.get("State"));
    Map<String, Object> config = new LinkedHashMap<>(ContainerState.map(inspect.get("Config")));
    config.put("Cmd", translation.asked().get("Cmd"));
    config.put("ExposedPorts", translation.asked().get("ExposedPorts"));
    Map<String, Object> host = new LinkedHashMap<>(ContainerState.map(inspect.get("HostConfig")));
    host.put("NetworkMode", translation.asked().get("NetworkMode"));
    host.put("PortBindings", translation.asked().get("PortBindings"));
    Map<String, Object> network =
        new LinkedHashMap<>(ContainerState.map(inspect.get("NetworkSettings")));
    // A bridge engine publishes ports while the container runs (paused included), none otherwise.
    Map<String, Object> published = new LinkedHashMap<>();
    if (Boolean.TRUE.equals(state.get("Running"))) {
      translation
          .published()
          .forEach(
              (inside, outside) ->
                  published.put(
                      inside + "/tcp",
                      List.of(Map.of("HostIp", LOOPBACK, "HostPort", outside.toString()))));
    }
    network.put("Ports", published);
    inspect.put("Config", config);
    inspect.put("HostConfig", host);
    inspect.put("NetworkSettings", network);
    rewrittenReplies.incrementAndGet();
    return JSON.std.asBytes(inspect);
  }

  private byte[] bridgeList(byte[] body) throws IOException {
    List<Object> summaries = new ArrayList<>();
    for (Object item : JSON.std.listFrom(body)) {
      Map<String, Object> summary = new LinkedHashMap<>(ContainerState.map(item));
      Translation translation = byId.get(String.valueOf(summary.get("Id")));
      if (translation != null) {
        summary.put("HostConfig", Map.of("NetworkMode", translation.asked().get("NetworkMode")));
        summary.put("Ports", listPorts(translation, summary.get("State")));
        rewrittenReplies.incrementAndGet();
      }
      summaries.add(summary);
    }
    return JSON.std.asBytes(summaries);
  }

  private static List<Object> listPorts(Translation translation, Object state) {
    List<Object> ports = new ArrayList<>();
    if ("running".equals(state) || "paused".equals(state)) {
      translation
          .published()
          .forEach(
              (inside, outside) ->
                  ports.add(
                      Map.of(
                          "IP",
                          LOOPBACK,
                          "PrivatePort",
                          inside,
                          "PublicPort",
                          outside,
                          "Type",
                          "tcp")));
    }
    return ports;
  }

  // ---------------------------------------------------------------- HTTP/1.1

  /** A request head as it came, parsed; the body follows on the stream. */
  private record Head(
      String method, String target, Map<String, String> headers, List<String> lines) {
    static Head read(InputStream in) throws IOException {
      String line = DockerEngine.readLine(in);
      if (line == null) {
        return null;
      }
      String[] parts = line.split(" ", 3);
      if (parts.length != 3 || !parts[2].startsWith("HTTP/1.")) {
        throw new IOException("not an HTTP/1.x request: " + line);
      }
      List<String> lines = new ArrayList<>();
      Map<String, String> headers = new LinkedHashMap<>();
      for (String header; (header = DockerEngine.readLine(in)) != null && !header.isEmpty(); ) {
        lines.add(header);
        int colon = header.indexOf(':');
        if (colon > 0) {
          headers.put(
              header.substring(0, colon).trim().toLowerCase(Locale.ROOT),
              header.substring(colon + 1).trim());
        }
      }
      return new Head(parts[0], parts[1], headers, lines);
    }

    boolean closes() {
      return headers.getOrDefault("connection", "").equalsIgnoreCase("close");
    }

    boolean upgrades() {
      return headers.getOrDefault("connection", "").toLowerCase(Locale.ROOT).contains("upgrade");
    }

    byte[] raw() {
      StringBuilder head = new StringBuilder(method + " " + target + " HTTP/1.1\r\n");
      lines.forEach(line -> head.append(line).append("\r\n"));
      return head.append("\r\n").toString().getBytes(StandardCharsets.UTF_8);
    }

    /** The body, de-chunked if it came chunked. */
    byte[] body(InputStream in) throws IOException {
      if (headers
          .getOrDefault("transfer-encoding", "")
          .toLowerCase(Locale.ROOT)
          .contains("chunked")) {
        return new DockerEngine.ChunkedInputStream(in).readAllBytes();
      }
      return in.readNBytes(Integer.parseInt(headers.getOrDefault("content-length", "0").trim()));
    }

    /** This head with {@code body} (its length; no transfer coding) and Connection: close. */
    byte[] withBody(byte[] body) {
      StringBuilder head = new StringBuilder(method + " " + target + " HTTP/1.1\r\n");
      for (String line : lines) {
        String name = line.substring(0, Math.max(0, line.indexOf(':'))).trim();
        if (!Set.of("content-length", "transfer-encoding", "connection")
            .contains(name.toLowerCase(Locale.ROOT))) {
          head.append(line).append("\r\n");
        }
      }
      head.append("Connection: close\r\n");
      if (body.length > 0 || method.equals("POST")) {
        head.append("Content-Length: ").append(body.length).append("\r\n");
      }
      byte[] start = head.append("\r\n").toString().getBytes(StandardCharsets.UTF_8);
      byte[] whole = new byte[start.length + body.length];
      System.arraycopy(start, 0, whole, 0, start.length);
      System.arraycopy(body, 0, whole, start.length, body.length);
      return whole;
    }
  }

  /** An engine reply read whole (inspect, list and create answers are small JSON documents). */
  private record Response(String statusLine, int status, List<String> lines, byte[] body) {
    void writeTo(OutputStream out, byte[] content) throws IOException {
      StringBuilder head = new StringBuilder(statusLine).append("\r\n");
      for (String line : lines) {
        String name = line.substring(0, Math.max(0, line.indexOf(':'))).trim();
        if (!Set.of("content-length", "transfer-encoding", "connection")
            .contains(name.toLowerCase(Locale.ROOT))) {
          head.append(line).append("\r\n");
        }
      }
      head.append("Content-Length: ").append(content.length).append("\r\n");
      head.append("Connection: close\r\n\r\n");
      out.write(head.toString().getBytes(StandardCharsets.UTF_8));
      out.write(content);
      out.flush();
    }
  }

  private static Response exchange(byte[] request, SocketChannel engine) throws IOException {
    OutputStream toEngine = Channels.newOutputStream(engine);
    toEngine.write(request);
    toEngine.flush();
    InputStream in = new BufferedInputStream(Channels.newInputStream(engine));
    String statusLine = DockerEngine.readLine(in);
    if (statusLine == null || !statusLine.startsWith("HTTP/1.")) {
      throw new IOException("the engine answered no HTTP: " + statusLine);
    }
    int status = Integer.parseInt(statusLine.split(" ", 3)[1]);
    List<String> lines = new ArrayList<>();
    boolean chunked = false;
    long length = -1;
    for (String line; (line = DockerEngine.readLine(in)) != null && !line.isEmpty(); ) {
      lines.add(line);
      String lower = line.toLowerCase(Locale.ROOT);
      chunked |= lower.startsWith("transfer-encoding:") && lower.contains("chunked");
      if (lower.startsWith("content-length:")) {
        length = Long.parseLong(line.substring(line.indexOf(':') + 1).trim());
      }
    }
    byte[] body;
    if (status == 204 || status == 304) {
      body = new byte[0];
    } else if (chunked) {
      body = new DockerEngine.ChunkedInputStream(in).readAllBytes();
    } else if (length >= 0) {
      body = in.readNBytes(Math.toIntExact(length));
    } else {
      body = in.readAllBytes(); // Connection: close delimits it
    }
    return new Response(statusLine, status, lines, body);
  }

  private static void answer(OutputStream out, int status, String json) throws IOException {
    byte[] body = json.getBytes(StandardCharsets.UTF_8);
    new Response(
            "HTTP/1.1 " + status + " Bad Request",
            status,
            List.of("Content-Type: application/json"),
            body)
        .writeTo(out, body);
  }

  private static List<String> strings(Object value) {
    List<String> strings = new ArrayList<>();
    if (value instanceof List<?> list) {
      list.forEach(item -> strings.add(String.valueOf(item)));
    }
    return strings;
  }

  private static String after(List<String> args, String flag) {
    int at = args.indexOf(flag);
    return at >= 0 && at + 1 < args.size() ? args.get(at + 1) : "(absent)";
  }

  private static void closeQuietly(Closeable closeable) {
    try {
      closeable.close();
    } catch (IOException ignored) {
      // Shutting the proxy down: nothing to report.
    }
  }
}
