package dev.paddock.backend.docker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.paddock.api.SandboxException;
import dev.paddock.api.spi.RuntimeHandle;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * How the backend copes with answers a real engine gives only under load, which no test can bring
 * about on demand: dockerd 20.10 answering 409 or 500 to pause and unpause while the container is
 * in fact fine. A scripted engine on a unix socket (not a Docker Engine: it answers only the calls
 * these tests make) plays those answers; everything else about pause and resume is tested on the
 * real engine in {@link DockerBackendTest}.
 */
class ScriptedEngineTest {
  private Path dir;
  private ServerSocketChannel server;
  private Thread acceptor;
  private final ConcurrentLinkedQueue<String> requests = new ConcurrentLinkedQueue<>();
  private final AtomicInteger failuresLeft = new AtomicInteger();
  private volatile int failureStatus = 500;
  private volatile String state = "running";
  private volatile boolean hang;

  @BeforeEach
  void startEngine() throws IOException {
    dir = Files.createTempDirectory("paddock-scripted-engine-");
    Path socket = dir.resolve("docker.sock");
    server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    server.bind(UnixDomainSocketAddress.of(socket));
    acceptor = Thread.ofPlatform().daemon().start(this::serve);
  }

  @AfterEach
  void stopEngine() throws Exception {
    server.close();
    acceptor.join(5000);
    DockerTestEngine.deleteTree(dir);
  }

  private DockerBackend backend() {
    DockerSettings settings =
        DockerSettings.from(Map.of("docker.host", "unix://" + dir.resolve("docker.sock")));
    return new DockerBackend(
        settings,
        DockerEngine.connect(settings.dockerHost(), java.time.Duration.ofSeconds(2)),
        dir);
  }

  @Test
  void anEngineThatStopsAnsweringIsUnreachableNotAHang() {
    hang = true;
    long t0 = System.nanoTime();
    try (DockerBackend backend = backend()) {
      var state = backend.inspect(handle());
      assertThat(state.status()).isEqualTo(dev.paddock.api.SandboxStatus.ERROR);
      assertThat(state.failure().orElseThrow().kind())
          .isEqualTo(dev.paddock.api.spi.RuntimeFailure.Kind.ENGINE_UNREACHABLE);
    }
    assertThat(java.time.Duration.ofNanos(System.nanoTime() - t0))
        .isLessThan(java.time.Duration.ofSeconds(20));
  }

  private static RuntimeHandle handle() {
    return new RuntimeHandle(
        "sb-scripted", "docker", Map.of("container", "c0ffee", "network", "host", "port", "0"));
  }

  @Test
  void aCreateWhoseLimitsTheEngineDiscardsFailsAndLeavesNothing() {
    state = "created";
    try (DockerBackend backend = backend()) {
      assertThatThrownBy(
              () ->
                  backend.start(
                      Sandboxes.request(
                          "sb-scripted",
                          dev.paddock.api.SandboxSpec.builder("img:1").build(),
                          Sandboxes.newKey(),
                          Sandboxes.newKey())))
          .isInstanceOfSatisfying(
              dev.paddock.api.spi.RuntimeStartException.class,
              e ->
                  assertThat(e.failure().rawDetail())
                      .contains("would not enforce the sandbox's limits"));
    }
    assertThat(requests).contains("DELETE /containers/c0ffee?v=1&force=1");
    assertThat(requests).contains("DELETE /volumes/paddock-sb-scripted-workspace");
    assertThat(requests).noneMatch(r -> r.endsWith("/start"));
  }

  @Test
  void pauseIsRetriedThroughTransientErrors() {
    failuresLeft.set(3);
    failureStatus = 500;
    try (DockerBackend backend = backend()) {
      backend.pause(handle());
    }
    assertThat(requests.stream().filter(r -> r.startsWith("POST") && r.endsWith("/pause")))
        .hasSize(4);
    assertThat(state).isEqualTo("paused");
  }

  @Test
  void a409ForAContainerThatDidPauseCountsAsDone() {
    failuresLeft.set(1);
    failureStatus = 409;
    state = "running";
    pauseAnyway.set(true);
    try (DockerBackend backend = backend()) {
      backend.pause(handle());
    }
    assertThat(requests.stream().filter(r -> r.endsWith("/pause"))).hasSize(1);
  }

  @Test
  void pauseOfAStoppedContainerFailsClearlyWithoutRetrying() {
    failuresLeft.set(100);
    failureStatus = 409;
    state = "exited";
    try (DockerBackend backend = backend()) {
      assertThatThrownBy(() -> backend.pause(handle()))
          .isInstanceOf(SandboxException.class)
          .hasMessageContaining("is not running");
    }
    assertThat(requests.stream().filter(r -> r.endsWith("/pause"))).hasSize(1);
  }

  @Test
  void anEngineThatNeverRecoversGivesUpWithAMessage() {
    failuresLeft.set(1000);
    failureStatus = 500;
    try (DockerBackend backend = backend()) {
      assertThatThrownBy(() -> backend.pause(handle()))
          .isInstanceOf(SandboxException.class)
          .hasMessageContaining("try again");
    }
  }

  // The scripted engine

  private final java.util.concurrent.atomic.AtomicBoolean pauseAnyway =
      new java.util.concurrent.atomic.AtomicBoolean();

  private void serve() {
    while (server.isOpen()) {
      try (SocketChannel channel = server.accept()) {
        InputStream in = Channels.newInputStream(channel);
        OutputStream out = Channels.newOutputStream(channel);
        String requestLine = DockerEngine.readLine(in);
        long length = 0;
        for (String line; (line = DockerEngine.readLine(in)) != null && !line.isEmpty(); ) {
          if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
            length = Long.parseLong(line.substring(15).trim());
          }
        }
        in.readNBytes((int) length);
        String[] parts = requestLine.split(" ");
        String path = parts[1].replaceFirst("^/v[0-9.]+", "");
        requests.add(parts[0] + " " + path);
        answer(in, out, parts[0], path);
      } catch (IOException e) {
        // This connection broke (the client may close before reading a whole reply, as the
        // client's version negotiation does); the engine goes on unless it was closed.
        if (!server.isOpen()) {
          return;
        }
      }
    }
  }

  private void answer(InputStream in, OutputStream out, String method, String path)
      throws IOException {
    if (hang && !path.equals("/_ping")) {
      in.transferTo(OutputStream.nullOutputStream()); // no answer until the client gives up
    } else if (path.equals("/_ping")) {
      reply(out, 200, "OK", List.of("API-Version: 1.41"));
    } else if (method.equals("GET") && path.startsWith("/images/")) {
      reply(out, 200, "{}", List.of());
    } else if (method.equals("POST") && path.startsWith("/volumes/create")) {
      reply(out, 201, "{\"Name\":\"paddock-sb-scripted-workspace\"}", List.of());
    } else if (method.equals("POST") && path.startsWith("/containers/create")) {
      reply(
          out,
          201,
          "{\"Id\":\"c0ffee\",\"Warnings\":[\"Your kernel does not support memory limitation or"
              + " the cgroup is not mounted. Limitation discarded.\"]}",
          List.of());
    } else if (method.equals("DELETE")) {
      state = "gone";
      reply(out, 204, "", List.of());
    } else if (state.equals("gone") && path.endsWith("/json")) {
      reply(out, 404, "{\"message\":\"No such container\"}", List.of());
    } else if (method.equals("GET") && path.endsWith("/json")) {
      reply(out, 200, "{\"State\":{\"Status\":\"" + state + "\"}}", List.of());
    } else if (method.equals("POST") && (path.endsWith("/pause") || path.endsWith("/unpause"))) {
      boolean pause = path.endsWith("/pause");
      if (failuresLeft.getAndDecrement() > 0) {
        if (pauseAnyway.get() && pause) {
          state = "paused"; // the engine did it, then answered an error anyway
        }
        reply(out, failureStatus, "{\"message\":\"transient engine error\"}", List.of());
      } else if (!state.equals(pause ? "running" : "paused")) {
        reply(out, 409, "{\"message\":\"container is " + state + "\"}", List.of());
      } else {
        state = pause ? "paused" : "running";
        reply(out, 204, "", List.of());
      }
    } else {
      reply(out, 404, "{\"message\":\"not scripted\"}", List.of());
    }
  }

  private static void reply(OutputStream out, int status, String body, List<String> headers)
      throws IOException {
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    StringBuilder head = new StringBuilder("HTTP/1.1 " + status + " X\r\n");
    headers.forEach(h -> head.append(h).append("\r\n"));
    head.append("Content-Type: application/json\r\nContent-Length: ")
        .append(bytes.length)
        .append("\r\n\r\n");
    out.write(head.toString().getBytes(StandardCharsets.US_ASCII));
    out.write(bytes);
    out.flush();
  }
}
