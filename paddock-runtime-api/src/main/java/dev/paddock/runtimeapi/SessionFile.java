package dev.paddock.runtimeapi;

import dev.paddock.http.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * The runtime API's sessions at rest: {@code <data dir>/runtime-api/sessions.json}, rewritten whole
 * after every change (a temporary file, forced to disk, renamed over the old one), so a restart
 * finds each session as its last change left it and a crash mid-write leaves the previous version.
 * It holds what the protocol needs beside the backend's truth (runtime id, key generation, spec,
 * handle, labels, failure), key <em>digests</em> only, never a key or the secret, and the names but
 * not the values of the caller's environment (they may be secrets). Owner-only (0600).
 *
 * <p>Thread-safe: {@link #save} holds {@link #writing} while it snapshots and writes, so the last
 * save to finish holds every change made before it started.
 */
final class SessionFile {
  static final int VERSION = 1;

  private final Path file;
  private final ReentrantLock writing = new ReentrantLock();

  SessionFile(Path dataDir) {
    this.file = dataDir.resolve("runtime-api").resolve("sessions.json");
  }

  /** What a previous run saved, or nothing (no file yet). */
  record Saved(String secretCheck, List<Session> sessions) {}

  /**
   * Reads the saved sessions.
   *
   * @throws IllegalStateException naming the file when it cannot be read or parsed: starting
   *     without it would forget every sandbox it names, so the operator has to look
   */
  Optional<Saved> load() {
    if (!Files.exists(file)) {
      return Optional.empty();
    }
    try {
      Map<String, Object> json = Json.parseObject(Files.readAllBytes(file));
      Object version = json.get("version");
      if (!(version instanceof Number n) || n.intValue() != VERSION) {
        throw new IllegalStateException("unknown version " + version);
      }
      List<Session> sessions = new ArrayList<>();
      for (Object session : SessionJson.list(json.get("sessions"))) {
        sessions.add(SessionJson.session(SessionJson.map(session)));
      }
      return Optional.of(new Saved(SessionJson.string(json, "secret_check"), sessions));
    } catch (IOException | RuntimeException e) {
      throw new IllegalStateException(
          "cannot read the runtime API's sessions from "
              + file
              + " ("
              + e.getMessage()
              + "); fix or move it away (its sandboxes are then no longer known)",
          e);
    }
  }

  /**
   * Writes every session {@code sessions} gives (asked for under the write lock).
   *
   * @throws UncheckedIOException when the file cannot be written (the previous version stays)
   */
  void save(String secretCheck, Supplier<List<Session>> sessions) {
    writing.lock();
    try {
      Map<String, Object> json = new LinkedHashMap<>();
      json.put("version", VERSION);
      json.put("secret_check", secretCheck);
      json.put("sessions", sessions.get().stream().map(SessionJson::json).toList());
      write(Json.bytes(json));
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
    } finally {
      writing.unlock();
    }
  }

  private void write(byte[] bytes) throws IOException {
    Files.createDirectories(file.getParent());
    Path temp = file.resolveSibling(file.getFileName() + ".tmp");
    Files.deleteIfExists(temp);
    try (FileChannel out =
        FileChannel.open(
            temp,
            Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
      ByteBuffer buffer = ByteBuffer.wrap(bytes);
      while (buffer.hasRemaining()) {
        out.write(buffer);
      }
      out.force(true);
    }
    Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }
}
