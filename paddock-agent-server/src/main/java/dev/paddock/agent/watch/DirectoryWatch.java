package dev.paddock.agent.watch;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Watches one directory (and, when recursive, every directory below it, registering new ones as
 * they appear) with the JDK {@link WatchService} (inotify on Linux), and sends changes in batches
 * coalesced over {@link #WINDOW}: a file created and then written is one {@code created}, created
 * and deleted within the window is nothing, and a delete and a create of the same inode in one
 * window is one {@code moved}. Links are never followed. Runs on the caller's thread until the sink
 * fails (the client left) or the thread is interrupted; always closes its watch service.
 */
final class DirectoryWatch {
  static final Duration WINDOW = Duration.ofMillis(50);
  static final Duration HEARTBEAT = Duration.ofSeconds(10);

  /** Inode keys remembered for move detection, at most. */
  private static final int MAX_KEYS = 65_536;

  private final Path root;
  private final boolean recursive;
  private final int maxDirectories;
  private final WatchSink sink;
  private final Map<WatchKey, Path> directories = new HashMap<>();
  private final Map<Path, Object> inodes = new HashMap<>();
  private boolean limitReported;

  DirectoryWatch(Path root, boolean recursive, int maxDirectories, WatchSink sink) {
    this.root = root;
    this.recursive = recursive;
    this.maxDirectories = maxDirectories;
    this.sink = sink;
  }

  /** Watches until the client goes away; the first message is {@code ready}. */
  void run() throws IOException, InterruptedException {
    try (WatchService service = FileSystems.getDefault().newWatchService()) {
      List<Path> unused = new ArrayList<>();
      register(service, root, unused);
      sink.send(
          message(
              "ready",
              Map.of(
                  "root", root.toString(),
                  "recursive", recursive,
                  "directories", directories.size())));
      reportLimitIfHit();
      loop(service);
    } catch (ClosedWatchServiceException e) {
      // Closed under us: the end.
    }
  }

  private void loop(WatchService service) throws IOException, InterruptedException {
    while (true) {
      WatchKey first = service.poll(HEARTBEAT.toMillis(), TimeUnit.MILLISECONDS);
      if (first == null) {
        sink.send(message("ping", Map.of()));
        continue;
      }
      Batch batch = new Batch();
      long deadline = System.nanoTime() + WINDOW.toNanos();
      for (WatchKey key = first; key != null; ) {
        collect(service, key, batch);
        long left = deadline - System.nanoTime();
        key = left > 0 ? service.poll(left, TimeUnit.NANOSECONDS) : service.poll();
      }
      for (Map<String, Object> m : batch.messages()) {
        if (m.get("type").equals("moved") && m.get("kind").equals("directory")) {
          rebase(root.resolve((String) m.get("from")), root.resolve((String) m.get("path")));
        }
        sink.send(m);
      }
      reportLimitIfHit();
    }
  }

  private void collect(WatchService service, WatchKey key, Batch batch) throws IOException {
    Path dir = directories.get(key);
    for (WatchEvent<?> event : key.pollEvents()) {
      if (event.kind() == StandardWatchEventKinds.OVERFLOW || dir == null) {
        batch.overflow = true;
        continue;
      }
      Path path = dir.resolve((Path) event.context());
      if (event.kind() == StandardWatchEventKinds.ENTRY_CREATE) {
        created(service, path, batch);
      } else if (event.kind() == StandardWatchEventKinds.ENTRY_MODIFY) {
        batch.record(relative(path), "modified", kind(path), key(path));
      } else {
        Object inode = inodes.remove(path);
        batch.record(relative(path), "deleted", "unknown", inode);
      }
    }
    if (!key.reset()) {
      directories.remove(key);
    }
  }

  /** A watched directory moved within the root: its watches (inotify follows the inode) stay. */
  private void rebase(Path from, Path to) {
    directories.replaceAll(
        (key, dir) -> dir.startsWith(from) ? to.resolve(from.relativize(dir)) : dir);
  }

  /** A new entry; a new directory is registered and walked (entries made before that count). */
  private void created(WatchService service, Path path, Batch batch) throws IOException {
    Object inode = remember(path);
    // A directory moved here from elsewhere under the root brings its entries along: they are
    // part of the move, not new.
    boolean movedHere = inode != null && batch.deletedInodes().contains(inode);
    batch.record(relative(path), "created", kind(path), inode);
    if (recursive && Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
      List<Path> found = new ArrayList<>();
      register(service, path, found);
      for (Path inner : movedHere ? List.<Path>of() : found) {
        batch.record(relative(inner), "created", kind(inner), remember(inner));
      }
    }
  }

  /** Registers {@code start} (and below, when recursive), adding entries found to {@code found}. */
  private void register(WatchService service, Path start, List<Path> found) throws IOException {
    Files.walkFileTree(
        start,
        new SimpleFileVisitor<>() {
          @Override
          public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs)
              throws IOException {
            if (directories.size() >= maxDirectories) {
              pendingLimit = true;
              return FileVisitResult.SKIP_SUBTREE;
            }
            WatchKey key =
                dir.register(
                    service,
                    StandardWatchEventKinds.ENTRY_CREATE,
                    StandardWatchEventKinds.ENTRY_DELETE,
                    StandardWatchEventKinds.ENTRY_MODIFY);
            directories.put(key, dir);
            note(dir, attrs, start, found);
            return recursive || dir.equals(start)
                ? FileVisitResult.CONTINUE
                : FileVisitResult.SKIP_SUBTREE;
          }

          @Override
          public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
            note(file, attrs, start, found);
            return FileVisitResult.CONTINUE;
          }

          @Override
          public FileVisitResult visitFileFailed(Path file, IOException e) {
            return FileVisitResult.CONTINUE; // Gone already, or unreadable: nothing to watch.
          }
        });
  }

  private boolean pendingLimit;

  private void note(Path path, BasicFileAttributes attrs, Path start, List<Path> found) {
    if (inodes.size() < MAX_KEYS && attrs.fileKey() != null) {
      inodes.put(path, attrs.fileKey());
    }
    if (!path.equals(start)) {
      found.add(path);
    }
  }

  private void reportLimitIfHit() throws IOException {
    if (pendingLimit && !limitReported) {
      limitReported = true;
      sink.send(
          message(
              "overflow",
              Map.of(
                  "reason",
                  "more than "
                      + maxDirectories
                      + " directories: the ones beyond are not watched")));
    }
  }

  private Object remember(Path path) {
    Object key = key(path);
    if (key != null && inodes.size() < MAX_KEYS) {
      inodes.put(path, key);
    }
    return key;
  }

  private static Object key(Path path) {
    try {
      return Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS)
          .fileKey();
    } catch (IOException e) {
      return null;
    }
  }

  private static String kind(Path path) {
    try {
      BasicFileAttributes a =
          Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
      return a.isSymbolicLink()
          ? "symlink"
          : a.isDirectory() ? "directory" : a.isRegularFile() ? "file" : "other";
    } catch (IOException e) {
      return "unknown";
    }
  }

  private String relative(Path path) {
    return root.relativize(path).toString();
  }

  static Map<String, Object> message(String type, Map<String, Object> fields) {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("type", type);
    m.putAll(fields);
    return m;
  }

  /** The changes of one window, coalesced per path, in first-seen order. */
  private static final class Batch {
    private final Map<String, Change> changes = new LinkedHashMap<>();
    private final Map<String, Object> keys = new HashMap<>();
    boolean overflow;

    void record(String path, String type, String kind, Object inode) {
      Change before = changes.get(path);
      String merged = before == null ? type : merge(before.type(), type);
      if (merged.isEmpty()) {
        changes.remove(path);
        keys.remove(path);
        return;
      }
      String keptKind = type.equals("deleted") && before != null ? before.kind() : kind;
      changes.put(path, new Change(merged, path, "", keptKind));
      if (inode != null) {
        keys.put(path, inode);
      }
    }

    /** What two changes to one path within a window amount to ("" for nothing). */
    private static String merge(String first, String then) {
      return switch (first + ">" + then) {
        case "created>modified", "created>created" -> "created";
        case "created>deleted" -> "";
        case "deleted>created", "modified>created" -> "modified";
        default -> then;
      };
    }

    java.util.Set<Object> deletedInodes() {
      java.util.Set<Object> deleted = new java.util.HashSet<>();
      changes.forEach(
          (path, c) -> {
            if (c.type().equals("deleted") && keys.containsKey(path)) {
              deleted.add(keys.get(path));
            }
          });
      return deleted;
    }

    List<Map<String, Object>> messages() {
      pairMoves();
      List<Map<String, Object>> out = new ArrayList<>();
      if (overflow) {
        out.add(message("overflow", Map.of("reason", "the kernel dropped events")));
      }
      changes.values().forEach(c -> out.add(c.toJson()));
      return out;
    }

    /** A delete and a create of the same inode in one window is a move (rename). */
    private void pairMoves() {
      Map<Object, String> deletedByKey = new HashMap<>();
      changes.forEach(
          (path, c) -> {
            if (c.type().equals("deleted") && keys.containsKey(path)) {
              deletedByKey.put(keys.get(path), path);
            }
          });
      if (deletedByKey.isEmpty()) {
        return;
      }
      for (Change c : List.copyOf(changes.values())) {
        String from = c.type().equals("created") ? deletedByKey.get(keys.get(c.path())) : null;
        if (from != null) {
          changes.remove(from);
          changes.put(c.path(), new Change("moved", c.path(), from, c.kind()));
        }
      }
    }
  }
}
