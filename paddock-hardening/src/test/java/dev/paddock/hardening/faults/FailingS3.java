package dev.paddock.hardening.faults;

import dev.paddock.api.ArchiveStore;
import dev.paddock.controlplane.ArchiveStores;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A stand-in for an S3 endpoint that is down, on a loopback port: every request is answered 503
 * SlowDown, or its connection is reset before any answer ({@link Mode}). The product's S3 store
 * (the AWS SDK, with its retries) is pointed at it through the settings {@code paddock server}
 * reads.
 */
final class FailingS3 implements AutoCloseable {
  static final String BUCKET = "paddock-faults";

  /** How it fails each request. */
  enum Mode {
    UNAVAILABLE,
    RESET
  }

  private final ServerSocket server;
  private final Mode mode;
  private final AtomicInteger requests = new AtomicInteger();
  private final Thread acceptor;

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
            "faults-key-id",
            prefix + "SECRET_ACCESS_KEY",
            "faults-secret-key-0123456789"));
  }

  /** How many requests reached it. */
  int requests() {
    return requests.get();
  }

  private void accept() {
    while (!server.isClosed()) {
      try (Socket socket = server.accept()) {
        requests.incrementAndGet();
        readHead(socket.getInputStream());
        if (mode == Mode.RESET) {
          socket.setSoLinger(true, 0); // the close sends RST
        } else {
          answerUnavailable(socket.getOutputStream());
        }
      } catch (IOException e) {
        // The client went away, or close() closed the server socket: next, or the end.
      }
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
    try {
      acceptor.join();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
