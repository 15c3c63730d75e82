package dev.paddock.hardening.faults;

import dev.paddock.api.ArchiveStore;
import dev.paddock.archive.s3.InProcessS3;
import dev.paddock.controlplane.ArchiveStores;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A stand-in for an S3 endpoint that is down, on a loopback port: every request is answered 503
 * SlowDown, or its connection is reset before any answer ({@link Mode}). The product's S3 store
 * (the AWS SDK, with its retries) is pointed at it through the settings {@code paddock server}
 * reads. After {@link #recover} it is the endpoint coming back: every new connection is relayed
 * byte for byte to a real S3 API server ({@code InProcessS3}: s3proxy, whose bucket and credentials
 * the store uses from the start).
 */
final class FailingS3 implements AutoCloseable {
  static final String BUCKET = InProcessS3.BUCKET;

  /** How it fails each request. */
  enum Mode {
    UNAVAILABLE,
    RESET
  }

  private final ServerSocket server;
  private final Mode mode;
  private final AtomicInteger requests = new AtomicInteger();
  private final Thread acceptor;
  private volatile Optional<InetSocketAddress> recovered = Optional.empty();
  private final Set<Socket> relayed = ConcurrentHashMap.newKeySet();

  private FailingS3(ServerSocket server, Mode mode) {
    this.server = server;
    this.mode = mode;
    this.acceptor = Thread.ofVirtual().name("failing-s3").start(this::accept);
  }

  static FailingS3 start(Mode mode) throws IOException {
    return new FailingS3(new ServerSocket(0, 50, InetAddress.getLoopbackAddress()), mode);
  }

  /** The product's S3 archive store, configured as {@code paddock server} would be, on this. */
  ArchiveStore store() {
    String prefix = "RUNTIME_FILE_ARCHIVE_S3_";
    return ArchiveStores.fromSettings(
        Map.of(
            ArchiveStores.STORE_SETTING,
            "s3",
            prefix + "BUCKET",
            BUCKET,
            prefix + "ENDPOINT",
            "http://127.0.0.1:" + server.getLocalPort(),
            prefix + "PATH_STYLE",
            "true",
            prefix + "REGION",
            "us-east-1",
            prefix + "ACCESS_KEY_ID",
            InProcessS3.ACCESS_KEY_ID,
            prefix + "SECRET_ACCESS_KEY",
            InProcessS3.SECRET_ACCESS_KEY));
  }

  /** How many requests it failed. */
  int requests() {
    return requests.get();
  }

  /** From now on, relays every new connection to the S3 server at {@code endpoint}. */
  void recover(URI endpoint) {
    recovered = Optional.of(new InetSocketAddress(endpoint.getHost(), endpoint.getPort()));
  }

  private void accept() {
    while (!server.isClosed()) {
      try {
        Socket socket = server.accept();
        Optional<InetSocketAddress> to = recovered;
        if (to.isPresent()) {
          Thread.ofVirtual().name("failing-s3-relay").start(() -> relay(socket, to.get()));
        } else {
          fail(socket);
        }
      } catch (IOException e) {
        // The client went away, or close() closed the server socket: next, or the end.
      }
    }
  }

  private void fail(Socket client) throws IOException {
    try (Socket socket = client) {
      requests.incrementAndGet();
      readHead(socket.getInputStream());
      if (mode == Mode.RESET) {
        socket.setSoLinger(true, 0); // the close sends RST
      } else {
        answerUnavailable(socket.getOutputStream());
      }
    }
  }

  /** Copies both ways until either side closes (or {@link #close} does), then closes both. */
  private void relay(Socket client, InetSocketAddress to) {
    relayed.add(client);
    try (client;
        Socket upstream = new Socket(to.getAddress(), to.getPort())) {
      relayed.add(upstream);
      try {
        Thread back = Thread.ofVirtual().start(() -> copy(upstream, client));
        copy(client, upstream);
        back.join();
      } finally {
        relayed.remove(upstream);
      }
    } catch (IOException e) {
      // The S3 server cannot be reached or went away: the client sees its connection close.
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      relayed.remove(client);
    }
  }

  private static void copy(Socket from, Socket to) {
    try {
      from.getInputStream().transferTo(to.getOutputStream());
      to.shutdownOutput();
    } catch (IOException e) {
      // Either side closed: the other direction ends too.
    }
  }

  private static void readHead(InputStream in) throws IOException {
    int matched = 0;
    byte[] end = "\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
    for (int b; matched < end.length && (b = in.read()) >= 0; ) {
      matched = b == end[matched] ? matched + 1 : (b == end[0] ? 1 : 0);
    }
  }

  private static void answerUnavailable(OutputStream out) throws IOException {
    byte[] body =
        ("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>SlowDown</Code>"
                + "<Message>Please reduce your request rate.</Message></Error>")
            .getBytes(StandardCharsets.UTF_8);
    String head =
        "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/xml\r\nContent-Length: "
            + body.length
            + "\r\nConnection: close\r\n\r\n";
    out.write(head.getBytes(StandardCharsets.US_ASCII));
    out.write(body);
    out.flush();
  }

  @Override
  public void close() throws IOException {
    server.close();
    for (Socket socket : relayed) {
      socket.close();
    }
    try {
      acceptor.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
