package dev.paddock.controlplane;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import dev.paddock.api.ArchiveStore;
import dev.paddock.backend.kit.protocol.HttpAgents;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The control plane's side of an archive streams: a child JVM with a 32 MiB heap ({@code -Xmx32m})
 * captures a 256 MiB workspace archive (8× its heap) from an agent stand-in in the same JVM that
 * generates incompressible bytes on the fly, and stores it in a directory store; the stored
 * object's SHA-256 must equal what was sent. An archive held in memory anywhere on the way ends in
 * OutOfMemoryError. About 3-6 s on 2 cores. The 1 GiB figure at -Xmx256m is the {@code
 * ArchiveBench} command's (docs/BENCHMARKS.md).
 */
class ArchiveMemoryTest {
  static final long ARCHIVE_BYTES = 256L * 1024 * 1024;

  @TempDir Path work;

  @Test
  void aWorkspaceEightTimesTheHeapIsArchivedAt32MiB() throws Exception {
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    Process child =
        new ProcessBuilder(
                java.toString(),
                "-Xmx32m",
                "-XX:+UseSerialGC",
                "-cp",
                System.getProperty("java.class.path"),
                HeapBoundCapture.class.getName(),
                work.toString())
            .redirectErrorStream(true)
            .start();
    child.getOutputStream().close();
    String output;
    try {
      output = new String(child.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertThat(child.waitFor(120, TimeUnit.SECONDS)).isTrue();
    } finally {
      child.destroyForcibly();
    }
    assertThat(child.exitValue()).as(output).isZero();
    assertThat(output).contains("stored " + ARCHIVE_BYTES + " bytes, sha256 matches");
  }

  /** The child: a streaming agent stand-in, one capture, checks; exit 0 when all held. */
  static final class HeapBoundCapture {
    public static void main(String[] args) throws Exception {
      Path root = Path.of(args[0]);
      MessageDigest sent = MessageDigest.getInstance("SHA-256");
      HttpServer agent = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
      agent.createContext(
          "/api/file/archive",
          exchange -> {
            exchange.sendResponseHeaders(200, ARCHIVE_BYTES);
            try (OutputStream out = exchange.getResponseBody()) {
              stream(out, sent);
            }
          });
      agent.start();
      try (ArchiveStore store = ArchiveStores.directory(root.resolve("archives"));
          HttpAgents agents = HttpAgents.create(Duration.ofSeconds(5));
          WorkspaceArchiver archiver =
              new WorkspaceArchiver(
                  new ArchiveSettings(
                      true, true, ArchiveSettings.TAR_GZ, Duration.ofSeconds(100), "a"),
                  store,
                  Clock.systemUTC())) {
        List<String> keys =
            archiver.capture(
                new WorkspaceArchiver.Source(
                    "sb-big",
                    Optional.empty(),
                    Optional.empty(),
                    agents.at("http://127.0.0.1:" + agent.getAddress().getPort(), "k")));
        String key = keys.get(0);
        long size = store.size(key).orElseThrow();
        String stored = ArchiveStoreContract.sha256(store.open(key).orElseThrow());
        if (size != ARCHIVE_BYTES || !stored.equals(HexFormat.of().formatHex(sent.digest()))) {
          System.out.println("stored " + size + " bytes, sha256 differs");
          System.exit(1);
        }
        System.out.println("stored " + size + " bytes, sha256 matches; " + peak());
      } finally {
        agent.stop(0);
      }
    }

    private static void stream(OutputStream out, MessageDigest sent) throws IOException {
      SplittableRandom random = new SplittableRandom(7);
      byte[] chunk = new byte[64 * 1024];
      for (long left = ARCHIVE_BYTES; left > 0; left -= chunk.length) {
        for (int i = 0; i < chunk.length; i += 8) {
          long v = random.nextLong();
          for (int b = 0; b < 8; b++) {
            chunk[i + b] = (byte) (v >>> (8 * b));
          }
        }
        sent.update(chunk);
        out.write(chunk);
      }
    }

    private static String peak() throws IOException {
      return Files.readAllLines(Path.of("/proc/self/status")).stream()
          .filter(l -> l.startsWith("VmHWM"))
          .findFirst()
          .orElse("");
    }
  }
}
