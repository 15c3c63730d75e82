package dev.paddock.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Busy connections on platform threads, idle and upgraded ones on virtual threads: a server with
 * one platform thread lends it to the first connection, serves a second one at the same time on a
 * virtual thread, takes it back when its connection idles past {@code platformIdle} or is taken
 * over, and the connection itself goes on working through the move (same socket, same keep-alive,
 * its idle timeout counted from its last request across the move). Each request answers with the
 * kind of thread it ran on.
 */
class PlatformThreadsTest {
  private static final Duration PLATFORM_IDLE = Duration.ofMillis(150);
  private static final Duration IDLE = Duration.ofSeconds(20);

  private HttpServer server;
  private final CountDownLatch release = new CountDownLatch(1);
  private final CountDownLatch holding = new CountDownLatch(1);

  @BeforeEach
  void start() throws Exception {
    server =
        HttpServers.create(
            HttpServerConfig.builder(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .platformThreads(1)
                .platformIdle(PLATFORM_IDLE)
                .idleTimeout(IDLE)
                .build());
    server.createContext(
        "/",
        exchange -> {
          String path = exchange.getRequestURI().getPath();
          if (path.equals("/raw")) {
            HttpServers.takeOver(exchange, PlatformThreadsTest::answerThread);
            exchange.close();
            return;
          }
          if (path.equals("/hold")) {
            holding.countDown();
            awaitRelease();
          }
          byte[] body = kind().getBytes(StandardCharsets.US_ASCII);
          exchange.sendResponseHeaders(200, body.length);
          exchange.getResponseBody().write(body);
          exchange.close();
        });
    server.start();
  }

  @AfterEach
  void stop() {
    release.countDown();
    server.stop(0);
  }

  private static String kind() {
    return Thread.currentThread().isVirtual() ? "virtual" : "platform";
  }

  private void awaitRelease() {
    try {
      release.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** A taken-over connection: a 101, then one line naming the thread the takeover runs on. */
  private static void answerThread(InputStream in, OutputStream out) throws IOException {
    out.write(
        ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: raw\r\n\r\n" + kind() + "\n")
            .getBytes(StandardCharsets.US_ASCII));
    out.flush();
    while (in.read() >= 0) {
      // Held open until the client ends it.
    }
  }

  private int port() {
    return server.getAddress().getPort();
  }

  private static String get(RawClient client, String path) throws IOException {
    RawClient.Response response =
        client.send("GET " + path + " HTTP/1.1\r\nHost: x\r\n\r\n").read();
    assertThat(response.status()).isEqualTo(200);
    return response.body();
  }

  @Test
  void theFirstConnectionGetsThePlatformThreadAndASecondOneAtTheSameTimeAVirtualThread()
      throws Exception {
    try (RawClient first = new RawClient(port());
        RawClient second = new RawClient(port())) {
      first.send("GET /hold HTTP/1.1\r\nHost: x\r\n\r\n");
      assertThat(holding.await(5, TimeUnit.SECONDS)).isTrue();
      assertThat(get(second, "/")).isEqualTo("virtual");
      release.countDown();
      assertThat(first.read().body()).isEqualTo("platform");
      // Busy again at once: still the platform thread, on the same connection.
      assertThat(get(first, "/")).isEqualTo("platform");
    }
  }

  @Test
  void aConnectionIdleLongerThanPlatformIdleMovesToAVirtualThreadAndKeepsWorking()
      throws Exception {
    try (RawClient first = new RawClient(port())) {
      assertThat(get(first, "/")).isEqualTo("platform");
      // Once the first connection has idled past platformIdle its thread is free again: a new
      // connection gets it (each probe is a new connection, so none of them holds it long).
      await()
          .atMost(Duration.ofSeconds(5))
          .until(
              () -> {
                try (RawClient probe = new RawClient(port())) {
                  return get(probe, "/").equals("platform");
                }
              });
      assertThat(get(first, "/")).isEqualTo("virtual");
      assertThat(get(first, "/")).isEqualTo("virtual");
    }
  }

  @Test
  void theIdleTimeoutCountsFromTheLastRequestAcrossTheMove() throws Exception {
    // Its own server: a platform idle close to the idle timeout, so that a move which restarted
    // the idle clock (closing at 1.5 + 2 s) is far from one that carries it over (2 s).
    Duration platformIdle = Duration.ofMillis(1500);
    Duration idle = Duration.ofSeconds(2);
    HttpServer own =
        HttpServers.create(
            HttpServerConfig.builder(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0))
                .platformThreads(1)
                .platformIdle(platformIdle)
                .idleTimeout(idle)
                .build());
    own.createContext(
        "/",
        exchange -> {
          byte[] body = kind().getBytes(StandardCharsets.US_ASCII);
          exchange.sendResponseHeaders(200, body.length);
          exchange.getResponseBody().write(body);
          exchange.close();
        });
    own.start();
    try (RawClient client = new RawClient(own.getAddress().getPort(), 10_000)) {
      assertThat(get(client, "/")).isEqualTo("platform");
      long idleFrom = System.nanoTime();
      assertThat(client.closedByServer()).isTrue();
      assertThat(Duration.ofNanos(System.nanoTime() - idleFrom))
          .isGreaterThanOrEqualTo(idle.minus(Duration.ofMillis(200)))
          .isLessThan(idle.plus(Duration.ofSeconds(1)));
    } finally {
      own.stop(0);
    }
  }

  @Test
  void aTakenOverConnectionRunsOnAVirtualThreadAndGivesThePlatformThreadBackAtOnce()
      throws Exception {
    try (RawClient raw = new RawClient(port())) {
      raw.send("GET /raw HTTP/1.1\r\nHost: x\r\n\r\n");
      assertThat(raw.line()).startsWith("HTTP/1.1 101");
      assertThat(raw.line()).isEqualTo("Upgrade: raw");
      assertThat(raw.line()).isEmpty();
      assertThat(raw.line()).isEqualTo("virtual");
      // The takeover holds its connection open; had it kept the one platform thread, it would
      // hold it for as long (a takeover has no HTTP idle timeout to move it).
      try (RawClient next = new RawClient(port())) {
        assertThat(get(next, "/")).isEqualTo("platform");
      }
    }
  }
}
