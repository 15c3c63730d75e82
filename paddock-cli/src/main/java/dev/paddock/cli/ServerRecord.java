package dev.paddock.cli;

import com.fasterxml.jackson.jr.ob.JSON;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * {@code <data dir>/server.json}: where the server of a data dir really listens ({@code "url"}),
 * written by {@code paddock server} once it is bound (so {@code --port 0} works) and removed at a
 * clean stop. It names the server's pid and start time: a record whose process is gone, or is
 * another process reusing the pid, is stale (a killed server leaves one behind).
 */
final class ServerRecord {
  static final String FILE = "server.json";

  private final String url;
  private final long pid;
  private final Optional<Instant> startedAt;

  private ServerRecord(String url, long pid, Optional<Instant> startedAt) {
    this.url = url;
    this.pid = pid;
    this.startedAt = startedAt;
  }

  /** The URL a client on this machine reaches a server bound to {@code host}:{@code port} at. */
  static String localUrl(String host, int port) {
    return localUrl(host, port, false);
  }

  /** As above, {@code https://} when {@code secure}. */
  static String localUrl(String host, int port, boolean secure) {
    String reachable =
        switch (host) {
          case "0.0.0.0", "" -> "127.0.0.1";
          case "::", "[::]" -> "[::1]";
          default -> host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host;
        };
    return (secure ? "https://" : "http://") + reachable + ":" + port;
  }

  /** Records this process as the server of {@code dataDir}, listening at {@code url}. */
  static void write(Path dataDir, String url) throws IOException {
    ProcessHandle self = ProcessHandle.current();
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("url", url);
    m.put("pid", self.pid());
    self.info().startInstant().ifPresent(t -> m.put("started_at", t.toString()));
    Path temp = Files.createTempFile(dataDir, ".server-", ".json");
    Files.write(temp, JSON.std.asBytes(m));
    Files.move(
        temp,
        dataDir.resolve(FILE),
        StandardCopyOption.REPLACE_EXISTING,
        StandardCopyOption.ATOMIC_MOVE);
  }

  /** Removes the record at a clean stop, if it is still this process's (a newer server's stays). */
  static void remove(Path dataDir) {
    Path file = dataDir.resolve(FILE);
    try {
      Optional<ServerRecord> record = read(file);
      if (record.isPresent() && record.get().pid == ProcessHandle.current().pid()) {
        Files.deleteIfExists(file);
      }
    } catch (IOException e) {
      // Stopping anyway: a record left behind is detected as stale by its pid.
    }
  }

  /**
   * The URL recorded in {@code dataDir}, when its server still runs; empty when there is no record.
   *
   * @throws IllegalStateException when the record is stale, saying so (a killed server)
   */
  static Optional<String> liveUrl(Path dataDir) {
    Path file = dataDir.resolve(FILE);
    Optional<ServerRecord> record;
    try {
      record = read(file);
    } catch (IOException e) {
      throw new IllegalStateException("cannot read " + file + ": " + e.getMessage(), e);
    }
    if (record.isEmpty()) {
      return Optional.empty();
    }
    if (!record.get().alive()) {
      throw new IllegalStateException(
          "the server recorded in "
              + file
              + " (pid "
              + record.get().pid
              + ", "
              + record.get().url
              + ") is not running: start it with paddock server, or pass --url / PADDOCK_URL");
    }
    return Optional.of(record.get().url);
  }

  private boolean alive() {
    Optional<ProcessHandle> process = ProcessHandle.of(pid).filter(ProcessHandle::isAlive);
    if (process.isEmpty()) {
      return false;
    }
    Optional<Instant> started = process.get().info().startInstant();
    // A pid reused by another process starts at another time.
    return startedAt.isEmpty() || started.isEmpty() || startedAt.equals(started);
  }

  private static Optional<ServerRecord> read(Path file) throws IOException {
    if (!Files.exists(file)) {
      return Optional.empty();
    }
    Map<String, Object> m;
    try {
      m = JSON.std.mapFrom(Files.readAllBytes(file));
    } catch (IOException | RuntimeException e) {
      throw new IOException("malformed server record " + file + ": " + e.getMessage(), e);
    }
    if (!(m.get("url") instanceof String url) || !(m.get("pid") instanceof Number pid)) {
      throw new IOException("malformed server record " + file + ": needs url and pid");
    }
    return Optional.of(
        new ServerRecord(
            url,
            pid.longValue(),
            m.get("started_at") instanceof String t
                ? Optional.of(Instant.parse(t))
                : Optional.empty()));
  }
}
