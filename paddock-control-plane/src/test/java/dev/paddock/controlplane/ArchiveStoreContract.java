package dev.paddock.controlplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.sun.net.httpserver.HttpServer;
import dev.paddock.api.ArchiveStore;
import dev.paddock.backend.kit.protocol.HttpAgents;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What every {@link ArchiveStore} keeps; each store's test subclasses this and gives a fresh, empty
 * store per test (and closes it, and checks what it leaves behind, itself).
 */
public abstract class ArchiveStoreContract {
  @TempDir Path work;
  private ArchiveStore store;

  /** A fresh, empty store; closed by the contract after each test. */
  protected abstract ArchiveStore newStore() throws Exception;

  /**
   * A size that makes {@link ArchiveStore#put} upload in more than two parts where the store has
   * parts (and is simply large elsewhere); the default is 11 MiB + 1 byte.
   */
  protected long multipartBytes() {
    return 11L * 1024 * 1024 + 1;
  }

  /** A store-specific check that {@code key} was stored in parts; nothing by default. */
  protected void assertStoredInParts(String key) throws Exception {}

  @BeforeEach
  final void openStore() throws Exception {
    store = newStore();
  }

  @AfterEach
  final void closeStore() {
    store.close();
  }

  protected final ArchiveStore store() {
    return store;
  }

  @Test
  void anObjectComesBackByteForByte() throws Exception {
    Path file = randomFile("small", 100_000);

    store.put("a/sb-1/sb-1/20261129T120000000Z.tar.gz", file);

    assertThat(store.size("a/sb-1/sb-1/20261129T120000000Z.tar.gz")).contains(100_000L);
    assertThat(sha256(store.open("a/sb-1/sb-1/20261129T120000000Z.tar.gz").orElseThrow()))
        .isEqualTo(sha256(file));
    assertThat(file).exists();
  }

  @Test
  void anArchiveLargerThanAPartComesBackWhole() throws Exception {
    Path file = randomFile("large", multipartBytes());
    String key = "a/sb-1/sb-1/20261129T120000000Z.tar.gz";

    store.put(key, file);

    assertThat(store.size(key)).contains(multipartBytes());
    assertThat(sha256(store.open(key).orElseThrow())).isEqualTo(sha256(file));
    assertStoredInParts(key);
  }

  @Test
  void anEmptyObjectIsStored() throws Exception {
    Path file = Files.createFile(work.resolve("empty"));

    store.put("a/empty.patch", file);

    assertThat(store.size("a/empty.patch")).contains(0L);
    assertThat(store.open("a/empty.patch").orElseThrow().readAllBytes()).isEmpty();
  }

  @Test
  void listGivesTheKeysUnderAPrefixSorted() throws Exception {
    Path file = randomFile("x", 10);
    for (String key :
        List.of("p/sb-2/c/2.tar.gz", "p/sb-1/c/2.patch", "p/sb-1/c/1.patch", "q/sb-1/c/1.patch")) {
      store.put(key, file);
    }

    assertThat(store.list("p/sb-1/")).containsExactly("p/sb-1/c/1.patch", "p/sb-1/c/2.patch");
    assertThat(store.list("p/"))
        .containsExactly("p/sb-1/c/1.patch", "p/sb-1/c/2.patch", "p/sb-2/c/2.tar.gz");
    assertThat(store.list("nothing/")).isEmpty();
  }

  @Test
  void aMissingObjectIsEmpty() throws Exception {
    assertThat(store.open("a/none.tar.gz")).isEmpty();
    assertThat(store.size("a/none.tar.gz")).isEmpty();
  }

  @Test
  void putReplacesAnObject() throws Exception {
    store.put("a/k.patch", randomFile("one", 5_000));
    Path second = randomFile("two", 7_000);

    store.put("a/k.patch", second);

    assertThat(store.size("a/k.patch")).contains(7_000L);
    assertThat(sha256(store.open("a/k.patch").orElseThrow())).isEqualTo(sha256(second));
    assertThat(store.list("a/")).containsExactly("a/k.patch");
  }

  @Test
  void siblingKeysAreSeparateObjects() throws Exception {
    String base = "a/sb-1/sb-1/20261129T120000000Z";
    Path first = randomFile("first", 1_000);
    Path second = randomFile("second", 2_000);

    store.put(base + ".tar.gz", first);
    store.put(base + ".tar.gz.manifest.json", first);
    store.put(base + "-2.tar.gz", second);

    assertThat(store.list(base + "."))
        .containsExactly(base + ".tar.gz", base + ".tar.gz.manifest.json");
    assertThat(sha256(store.open(base + ".tar.gz").orElseThrow())).isEqualTo(sha256(first));
    assertThat(sha256(store.open(base + "-2.tar.gz").orElseThrow())).isEqualTo(sha256(second));
  }

  @Test
  void twoCapturesInOneMillisecondGetTheirOwnKeys() throws Exception {
    Instant frozen = Instant.parse("2026-11-29T12:00:00.123Z");
    HttpServer agent = fakeAgent("workspace bytes");
    try (HttpAgents agents = HttpAgents.create(Duration.ofSeconds(5));
        WorkspaceArchiver archiver =
            new WorkspaceArchiver(
                new ArchiveSettings(
                    true, false, ArchiveSettings.TAR_GZ, Duration.ofSeconds(30), "archives"),
                store,
                Clock.fixed(frozen, ZoneOffset.UTC))) {
      WorkspaceArchiver.Source source =
          new WorkspaceArchiver.Source(
              "sb-1",
              Optional.of("bob"),
              Optional.empty(),
              agents.at("http://127.0.0.1:" + agent.getAddress().getPort(), "admin-key"));

      List<String> first = archiver.capture(source);
      List<String> second = archiver.capture(source);

      assertThat(first).containsExactly("archives/sb-1/sb-1/20261129T120000123Z.tar.gz");
      assertThat(second).containsExactly("archives/sb-1/sb-1/20261129T120000123Z-2.tar.gz");
      assertThat(store.list("archives/sb-1/"))
          .containsExactly(
              "archives/sb-1/sb-1/20261129T120000123Z-2.tar.gz",
              "archives/sb-1/sb-1/20261129T120000123Z-2.tar.gz.manifest.json",
              "archives/sb-1/sb-1/20261129T120000123Z.tar.gz",
              "archives/sb-1/sb-1/20261129T120000123Z.tar.gz.manifest.json");
    } finally {
      agent.stop(0);
    }
  }

  @Test
  void malformedKeysAreRefused() {
    Path file = work.resolve("unused");
    for (String key : List.of("../x", "a/../b", "a//b", "/a", "a/./b", "a b")) {
      assertThatThrownBy(() -> store.put(key, file))
          .as(key)
          .isInstanceOf(IllegalArgumentException.class);
    }
  }

  // Helpers

  private Path randomFile(String name, long bytes) throws IOException {
    Path file = work.resolve(name);
    Random random = new Random(name.hashCode());
    byte[] buffer = new byte[64 * 1024];
    try (OutputStream out = Files.newOutputStream(file)) {
      for (long left = bytes; left > 0; left -= buffer.length) {
        random.nextBytes(buffer);
        out.write(buffer, 0, (int) Math.min(buffer.length, left));
      }
    }
    return file;
  }

  protected static String sha256(Path file) throws Exception {
    return sha256(Files.newInputStream(file));
  }

  /** The SHA-256 of everything {@code in} holds, streamed; closes it. */
  protected static String sha256(InputStream in) throws Exception {
    MessageDigest sha = MessageDigest.getInstance("SHA-256");
    try (InputStream body = new DigestInputStream(in, sha)) {
      body.transferTo(OutputStream.nullOutputStream());
    }
    return HexFormat.of().formatHex(sha.digest());
  }

  /** An agent that answers every archive request with {@code body}, and nothing else. */
  private static HttpServer fakeAgent(String body) throws IOException {
    HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    server.createContext(
        "/api/file/archive",
        exchange -> {
          exchange.sendResponseHeaders(200, bytes.length);
          try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
          }
        });
    server.start();
    return server;
  }
}
