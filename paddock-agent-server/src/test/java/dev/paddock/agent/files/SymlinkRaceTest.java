package dev.paddock.agent.files;

import static dev.paddock.agent.files.UploadDownloadTest.q;
import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.agent.AgentFixture;
import dev.paddock.agent.user.RunAs;
import java.io.IOException;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * D3: while a thread flips a workspace directory between a real directory and a link to a canary
 * directory outside the only root, as fast as it can, 10,000 file requests through that directory
 * (upload, download, list, stat, move, copy, delete, chmod, mkdir, tar download) never read or
 * change anything in the canary. As root the agent runs commands as nobody, the production set-up
 * of the Docker backend.
 */
class SymlinkRaceTest {
  private static final int ATTEMPTS = 10_000;
  private static final int CLIENTS = 4;
  private static final String CANARY_TEXT = "CANARY-SECRET";
  private static final long STATE_NANOS = 500_000;
  private static final boolean ROOT = "root".equals(System.getProperty("user.name"));

  @RegisterExtension
  final AgentFixture agent =
      new AgentFixture(
          b -> {
            b.fileRoots(List.of(b.build().workspace()));
            if (ROOT) {
              b.runAs(new RunAs(65534, 65534));
            }
          });

  private final AtomicBoolean flipping = new AtomicBoolean(true);
  private final LongAdder flips = new LongAdder();
  private final Map<Integer, AtomicInteger> statuses = new ConcurrentHashMap<>();
  private final List<String> escapes = new java.util.concurrent.CopyOnWriteArrayList<>();

  @Test
  void noRequestReachesOutsideTheRootThroughASwappedDirectory() throws Exception {
    Path canary = agent.scratch().resolve("canary");
    Files.createDirectories(canary);
    Files.writeString(canary.resolve("secret.txt"), CANARY_TEXT);
    Files.writeString(canary.resolve("only-in-canary"), CANARY_TEXT);
    Files.setPosixFilePermissions(canary, PosixFilePermissions.fromString("rwxr-xr-x"));
    Map<String, String> canaryBefore = snapshot(canary);

    Path ws = agent.workspace();
    Path real = Files.createDirectories(ws.resolve("d.real"));
    Files.writeString(real.resolve("secret.txt"), "inside");
    Path link = Files.createSymbolicLink(ws.resolve("d.link"), canary);
    Path flipped = ws.resolve("d");

    Thread flipper = Thread.ofPlatform().start(() -> flip(real, link, flipped));
    try (ExecutorService clients = Executors.newFixedThreadPool(CLIENTS)) {
      List<Future<?>> runs = new java.util.ArrayList<>();
      for (int c = 0; c < CLIENTS; c++) {
        int client = c;
        runs.add(
            clients.submit(
                () -> {
                  for (int i = client; i < ATTEMPTS; i += CLIENTS) {
                    attempt(i, flipped);
                  }
                  return null;
                }));
      }
      for (Future<?> run : runs) {
        run.get();
      }
    } finally {
      flipping.set(false);
      flipper.join();
    }

    assertThat(escapes)
        .as("requests that saw or touched the canary (statuses %s, %s flips)", statuses, flips)
        .isEmpty();
    assertThat(snapshot(canary)).as("the canary directory after the race").isEqualTo(canaryBefore);
    assertThat(statuses).as("statuses %s", statuses).doesNotContainKey(500);
    assertThat(statuses.getOrDefault(200, new AtomicInteger()).get())
        .as("requests that went through the real directory")
        .isGreaterThan(ATTEMPTS / 50);
    assertThat(flips.sum()).as("flips during the run").isGreaterThan(10);
    assertThat(statuses.getOrDefault(403, new AtomicInteger()).get())
        .as("requests that met the link (refused: outside the roots)")
        .isGreaterThan(ATTEMPTS / 50);
  }

  /**
   * Swaps the directory and the link at {@code flipped} on a clock: each holds the name for {@link
   * #STATE_NANOS} (moving the directory may take longer: the kernel waits for the agent's
   * operations inside it), and in between the name is briefly missing.
   */
  private void flip(Path real, Path link, Path flipped) {
    try {
      boolean linkIn = false;
      Files.move(real, flipped, StandardCopyOption.ATOMIC_MOVE);
      while (flipping.get()) {
        boolean wantLink = (System.nanoTime() / STATE_NANOS) % 2 == 1;
        if (wantLink == linkIn) {
          Thread.onSpinWait();
          continue;
        }
        Files.move(flipped, linkIn ? link : real, StandardCopyOption.ATOMIC_MOVE);
        Files.move(wantLink ? link : real, flipped, StandardCopyOption.ATOMIC_MOVE);
        linkIn = wantLink;
        flips.increment();
      }
      Files.move(flipped, linkIn ? link : real, StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  /** Names repeat (modulo 16) so the directory stays small and every request stays cheap. */
  private void attempt(int i, Path d) throws Exception {
    String dir = d.toString();
    HttpResponse<String> response =
        switch (i % 10) {
          case 0 -> upload(dir + "/up-" + (i % 16));
          case 1 -> agent.get("/api/file/download?path=" + q(dir + "/secret.txt"));
          case 2 -> agent.get("/api/file/list?path=" + q(dir));
          case 3 -> agent.get("/api/file/stat?path=" + q(dir + "/only-in-canary"));
          case 4 ->
              json(
                  "move",
                  "{\"source\":%s,\"destination\":%s}",
                  dir + "/secret.txt",
                  dir + "/moved-" + (i % 16));
          case 5 ->
              json(
                  "copy",
                  "{\"source\":%s,\"destination\":%s}",
                  dir + "/secret.txt",
                  dir + "/copy-" + (i % 16));
          case 6 -> json("delete", "{\"path\":%s}", dir + "/secret.txt");
          case 7 -> json("chmod", "{\"path\":%s,\"mode\":\"0600\"}", dir + "/secret.txt");
          case 8 -> json("create_directory", "{\"path\":%s}", dir + "/made-" + (i % 16));
          default -> agent.get("/api/file/download_tar?path=" + q(dir));
        };
    statuses.computeIfAbsent(response.statusCode(), s -> new AtomicInteger()).incrementAndGet();
    boolean sawCanary =
        response.body().contains(CANARY_TEXT)
            || (response.statusCode() == 200 && response.body().contains("only-in-canary"));
    if (response.statusCode() == 500) {
      escapes.add("attempt " + i + " answered 500: " + response.body());
    }
    if (sawCanary) {
      escapes.add("attempt " + i + " (" + response.statusCode() + "): " + response.body());
    }
  }

  private HttpResponse<String> upload(String path) throws Exception {
    return agent.send(
        agent
            .request("/api/file/upload?path=" + q(path))
            .header("Content-Type", Multipart.CONTENT_TYPE)
            .POST(Multipart.of("planted".getBytes(StandardCharsets.UTF_8)))
            .build());
  }

  private HttpResponse<String> json(String route, String format, String... paths) throws Exception {
    Object[] quoted = Stream.of(paths).map(AgentFixture::quote).toArray();
    return agent.send(
        agent
            .request("/api/file/" + route)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(String.format(format, quoted)))
            .build());
  }

  /** Every entry of {@code dir}: name to content, mode and mtime. */
  private static Map<String, String> snapshot(Path dir) throws IOException {
    Map<String, String> entries = new TreeMap<>();
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.toList()) {
        String what =
            PosixFilePermissions.toString(
                    Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS))
                + " "
                + Files.getLastModifiedTime(p, LinkOption.NOFOLLOW_LINKS)
                + (Files.isRegularFile(p) ? " " + Files.readString(p) : "");
        entries.put(dir.relativize(p).toString(), what);
      }
    }
    return entries;
  }
}
