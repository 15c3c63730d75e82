package dev.paddock.agent.watch;

import dev.paddock.agent.files.SafeFs;
import dev.paddock.http.Call;
import dev.paddock.http.HttpError;
import dev.paddock.http.Json;
import dev.paddock.http.Router;
import dev.paddock.http.WebSocket;
import dev.paddock.http.WebSocketListener;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.Semaphore;

/**
 * {@code GET /api/file/watch} (NDJSON) and {@code GET /api/file/watch/ws} (WebSocket): changes
 * under a directory, see docs/API.md "File watch". At most {@link #MAX_WATCHES} at once; each holds
 * one JDK watch service (one inotify instance and its poller thread) while its client is connected.
 */
public final class WatchRoutes {
  static final int MAX_WATCHES = 16;
  static final int MAX_DIRECTORIES = 4096;

  private final SafeFs fs;
  private final Semaphore slots = new Semaphore(MAX_WATCHES);

  private WatchRoutes(SafeFs fs) {
    this.fs = fs;
  }

  /**
   * Registers the routes. The watched directory is checked through {@code fs} when the watch starts
   * (walked from a root without following links by name; a link within the roots is followed
   * explicitly); the watch itself then registers directories by path, as inotify does.
   */
  public static void register(Router router, SafeFs fs) {
    WatchRoutes routes = new WatchRoutes(fs);
    router
        .add("GET", "/api/file/watch", routes::stream)
        .websocket("/api/file/watch/ws", routes::socket);
  }

  private record Request(Path root, boolean recursive) {}

  private Request request(Call call) throws IOException {
    call.allowQuery(Set.of("path", "recursive", "session_api_key"));
    String raw = call.requiredQuery("path");
    SafeFs.FileEntry entry = fs.stat(raw, true);
    if (entry.type() != SafeFs.FileType.DIRECTORY) {
      throw HttpError.badRequest("path '" + entry.path() + "' is not an existing directory");
    }
    return new Request(entry.path(), call.queryBoolean("recursive").orElse(true));
  }

  private void acquire() {
    if (!slots.tryAcquire()) {
      throw new HttpError(429, MAX_WATCHES + " watches are open already; close one first");
    }
  }

  private void stream(Call call) throws Exception {
    Request request = request(call);
    acquire();
    try (OutputStream out = call.stream(200, "application/x-ndjson", 0)) {
      new DirectoryWatch(
              request.root(),
              request.recursive(),
              MAX_DIRECTORIES,
              message -> {
                out.write(Json.bytes(message));
                out.write('\n');
                out.flush();
              })
          .run();
    } catch (IOException e) {
      // The client went away: the watch is over.
    } finally {
      slots.release();
    }
  }

  private WebSocketListener socket(Call call) throws IOException {
    Request request = request(call);
    acquire();
    return new WebSocketListener() {
      private Thread watcher;

      @Override
      public void onOpen(WebSocket socket) {
        watcher = Thread.ofVirtual().name("paddock-watch").start(() -> watch(socket, request));
      }

      @Override
      public void onText(WebSocket socket, String text) {
        // Nothing to say to a watch: messages from the client are ignored.
      }

      @Override
      public void onClose(WebSocket socket, int code, String reason) {
        watcher.interrupt();
      }
    };
  }

  private void watch(WebSocket socket, Request request) {
    try {
      new DirectoryWatch(
              request.root(),
              request.recursive(),
              MAX_DIRECTORIES,
              message -> socket.sendText(new String(Json.bytes(message), StandardCharsets.UTF_8)))
          .run();
    } catch (IOException e) {
      socket.close(1011, "watch failed");
    } catch (InterruptedException e) {
      // The client closed the socket.
    } finally {
      slots.release();
    }
  }
}
