package dev.paddock.agent.watch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.agent.AgentFixture;
import dev.paddock.http.Json;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/** {@code GET /api/file/watch}: changes under a directory as NDJSON, over a real socket. */
class FileWatchTest {
  @TempDir static Path sandbox;

  @RegisterExtension
  final AgentFixture agent = new AgentFixture(b -> b.fileRoots(List.of(sandbox.resolve("root"))));

  private Path root;
  private final List<Stream<String>> open = new ArrayList<>();

  @BeforeEach
  void layout() throws Exception {
    root = Files.createDirectories(sandbox.resolve("root/project"));
    Files.createDirectories(root.resolve("src/deep"));
  }

  @AfterEach
  void closeStreams() throws Exception {
    open.forEach(Stream::close);
    for (Path p :
        Files.walk(sandbox.resolve("root")).sorted(java.util.Comparator.reverseOrder()).toList()) {
      Files.deleteIfExists(p);
    }
  }

  @Test
  void createThenWriteIsOneCreatedChange() throws Exception {
    BlockingQueue<Map<String, Object>> events = watch(root, true);

    Files.writeString(root.resolve("a.txt"), "hello");

    assertThat(next(events))
        .containsEntry("type", "created")
        .containsEntry("path", "a.txt")
        .containsEntry("kind", "file");
    Files.writeString(root.resolve("a.txt"), "again");
    assertThat(next(events)).containsEntry("type", "modified").containsEntry("path", "a.txt");
  }

  @Test
  void changesInSubdirectoriesAndNewOnesAreReported() throws Exception {
    BlockingQueue<Map<String, Object>> events = watch(root, true);

    Files.writeString(root.resolve("src/deep/x.py"), "x");
    assertThat(next(events))
        .containsEntry("type", "created")
        .containsEntry("path", "src/deep/x.py");

    Files.createDirectories(root.resolve("new/inner"));
    List<Object> paths = new ArrayList<>();
    paths.add(next(events).get("path"));
    paths.add(next(events).get("path"));
    assertThat(paths).containsExactly("new", "new/inner");
    Files.writeString(root.resolve("new/inner/y.txt"), "y");
    assertThat(next(events))
        .containsEntry("type", "created")
        .containsEntry("path", "new/inner/y.txt");
  }

  @Test
  void renameIsOneMoveAndDeleteIsReported() throws Exception {
    Files.writeString(root.resolve("old.txt"), "data");
    BlockingQueue<Map<String, Object>> events = watch(root, true);

    Files.move(root.resolve("old.txt"), root.resolve("src/new.txt"));
    assertThat(next(events))
        .containsEntry("type", "moved")
        .containsEntry("from", "old.txt")
        .containsEntry("path", "src/new.txt");

    Files.delete(root.resolve("src/new.txt"));
    assertThat(next(events)).containsEntry("type", "deleted").containsEntry("path", "src/new.txt");
  }

  @Test
  void movedDirectoryKeepsBeingWatchedUnderItsNewName() throws Exception {
    BlockingQueue<Map<String, Object>> events = watch(root, true);
    Files.move(root.resolve("src"), root.resolve("lib"));
    assertThat(next(events)).containsEntry("type", "moved").containsEntry("path", "lib");

    Files.writeString(root.resolve("lib/deep/z.txt"), "z");

    assertThat(nextFile(events))
        .containsEntry("type", "created")
        .containsEntry("path", "lib/deep/z.txt");
  }

  @Test
  void nonRecursiveWatchIgnoresSubdirectories() throws Exception {
    BlockingQueue<Map<String, Object>> events = watch(root, false);

    Files.writeString(root.resolve("src/deep/ignored.txt"), "x");
    Files.writeString(root.resolve("top.txt"), "x");

    assertThat(next(events)).containsEntry("path", "top.txt");
  }

  @Test
  void watchEndsWhenTheClientGoesAway() throws Exception {
    long before = inotifyInstances();
    watch(root, true);
    assertThat(inotifyInstances()).isEqualTo(before + 1);

    open.forEach(Stream::close);
    // The next message (a change, or the heartbeat) fails to send and ends the watch.
    Files.writeString(root.resolve("wake.txt"), "x");

    Awaitility.await("watch service closed")
        .atMost(Duration.ofSeconds(15))
        .until(() -> inotifyInstances() == before);
  }

  @Test
  void pathsOutsideTheRootsOrNotDirectoriesAreRefused() throws Exception {
    Files.createDirectories(sandbox.resolve("outside"));
    Files.createSymbolicLink(root.resolve("escape"), sandbox.resolve("outside"));
    assertStatus("/api/file/watch?path=" + encode(sandbox.resolve("outside")), 403);
    assertStatus("/api/file/watch?path=" + encode(root.resolve("escape")), 403);
    assertStatus("/api/file/watch?path=" + encode(root.resolve("../../outside")), 403);
    assertStatus("/api/file/watch?path=relative/dir", 400);
    Files.writeString(root.resolve("file.txt"), "x");
    assertStatus("/api/file/watch?path=" + encode(root.resolve("file.txt")), 400);
    assertStatus("/api/file/watch", 422);
    assertStatus("/api/file/watch?path=" + encode(root) + "&recursive=maybe", 422);
  }

  private void assertStatus(String path, int status) throws Exception {
    HttpResponse<String> response = agent.get(path);
    assertThat(response.statusCode()).as(response.body()).isEqualTo(status);
    assertThat(response.body()).contains("\"detail\"");
  }

  /** Opens a watch and waits for its ready line; later lines (but pings) go to the queue. */
  private BlockingQueue<Map<String, Object>> watch(Path dir, boolean recursive) throws Exception {
    HttpResponse<Stream<String>> response =
        agent
            .client()
            .send(
                agent
                    .request("/api/file/watch?path=" + encode(dir) + "&recursive=" + recursive)
                    .GET()
                    .build(),
                HttpResponse.BodyHandlers.ofLines());
    assertThat(response.statusCode()).isEqualTo(200);
    Stream<String> lines = response.body();
    open.add(lines);
    BlockingQueue<Map<String, Object>> events = new LinkedBlockingQueue<>();
    Thread.ofVirtual()
        .start(
            () -> {
              try {
                lines.forEach(
                    line -> events.add(Json.parseObject(line.getBytes(StandardCharsets.UTF_8))));
              } catch (RuntimeException e) {
                // Stream closed by the test.
              }
            });
    Map<String, Object> ready = events.poll(10, TimeUnit.SECONDS);
    assertThat(ready)
        .containsEntry("type", "ready")
        .containsEntry("root", dir.toRealPath().toString());
    return events;
  }

  private static Map<String, Object> next(BlockingQueue<Map<String, Object>> events)
      throws Exception {
    while (true) {
      Map<String, Object> event = events.poll(10, TimeUnit.SECONDS);
      assertThat(event).as("an event within 10 s").isNotNull();
      if (!event.get("type").equals("ping")) {
        return event;
      }
    }
  }

  /** The next change to a non-directory (a directory's own mtime change may come first). */
  private static Map<String, Object> nextFile(BlockingQueue<Map<String, Object>> events)
      throws Exception {
    Map<String, Object> event;
    do {
      event = next(events);
    } while (event.get("kind").equals("directory") && event.get("type").equals("modified"));
    return event;
  }

  private static long inotifyInstances() throws Exception {
    try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
      return fds.filter(
              fd -> {
                try {
                  return Files.readSymbolicLink(fd).toString().contains("inotify");
                } catch (Exception e) {
                  return false;
                }
              })
          .count();
    }
  }

  private static String encode(Path path) {
    return URLEncoder.encode(path.toString(), StandardCharsets.UTF_8);
  }
}
