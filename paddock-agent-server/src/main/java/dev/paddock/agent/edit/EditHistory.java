package dev.paddock.agent.edit;

import static java.nio.file.StandardOpenOption.CREATE_NEW;
import static java.nio.file.StandardOpenOption.WRITE;

import dev.paddock.http.HttpError;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;

/**
 * The versions {@code undo_edit} can go back to: for each file, the content before each of its last
 * {@link #MAX_PER_FILE} edits, spooled to files under the agent's state directory (never the
 * workspace, never the heap, which is small), at most {@code maxBytes} in all, the oldest versions
 * of any file dropped first. Each version remembers the {@link Fingerprint} the file had right
 * after the edit that saved it: when the file no longer has it (a command, an upload or a person
 * changed it), the history of that file no longer leads back to anything meaningful and is dropped.
 * Thread-safe: every method holds this object's lock (spool writes are small and local).
 */
final class EditHistory {
  static final int MAX_PER_FILE = 10;

  /** One saved version. {@code content} is empty when the file did not exist before the edit. */
  private record Version(Path file, Optional<Path> content, long bytes, Fingerprint after) {}

  /** What the file was before its last edit: its bytes, or empty when it did not exist. */
  record Previous(Optional<byte[]> content) {}

  private final Path spool;
  private final long maxBytes;

  /** Guarded by this: newest version last in each deque, and in {@code all}. */
  private final Map<Path, Deque<Version>> byFile = new HashMap<>();

  private final Deque<Version> all = new ArrayDeque<>();
  private long bytes;
  private long sequence;

  EditHistory(Path spool, long maxBytes) {
    this.spool = spool;
    this.maxBytes = maxBytes;
  }

  /**
   * Saves {@code before} (empty: the file did not exist) as the version an undo of the edit just
   * made restores. {@code beforeFingerprint} is the file's fingerprint before the edit: when it is
   * not where the history left the file, the older versions are dropped first.
   */
  synchronized void saved(
      Path file,
      Optional<byte[]> before,
      int length,
      Fingerprint beforeFingerprint,
      Fingerprint after)
      throws IOException {
    Deque<Version> versions = byFile.get(file);
    if (versions != null && !versions.getLast().after().equals(beforeFingerprint)) {
      forget(file);
    }
    if (length > maxBytes) {
      forget(file);
      return;
    }
    Optional<Path> content = Optional.empty();
    if (before.isPresent()) {
      content = Optional.of(spool(before.get(), length));
    }
    Version version = new Version(file, content, content.isPresent() ? length : 0, after);
    byFile.computeIfAbsent(file, f -> new ArrayDeque<>()).addLast(version);
    all.addLast(version);
    bytes += version.bytes();
    trim(file);
  }

  /**
   * The version before the last edit of {@code file}, whose fingerprint is {@code current} now;
   * empty when there is none. 409 when the file changed since that edit (its history is dropped).
   */
  synchronized Optional<Previous> last(Path file, Fingerprint current) throws IOException {
    Deque<Version> versions = byFile.get(file);
    if (versions == null) {
      return Optional.empty();
    }
    if (!versions.getLast().after().equals(current)) {
      forget(file);
      throw HttpError.conflict(
          "No edit history found for "
              + file
              + ": it was changed outside the editor since its last edit, so its undo history was"
              + " discarded.");
    }
    Optional<Path> content = versions.getLast().content();
    if (content.isEmpty()) {
      return Optional.of(new Previous(Optional.empty()));
    }
    return Optional.of(new Previous(Optional.of(Files.readAllBytes(content.get()))));
  }

  /** Drops the version {@link #last} returned, now restored; the file is now {@code restored}. */
  synchronized void undone(Path file, Fingerprint restored) throws IOException {
    Deque<Version> versions = byFile.get(file);
    Version top = versions.removeLast();
    drop(top);
    all.remove(top);
    if (versions.isEmpty()) {
      byFile.remove(file);
      return;
    }
    Version below = versions.removeLast();
    Version rebased = new Version(file, below.content(), below.bytes(), restored);
    versions.addLast(rebased);
    replaceInAll(below, rebased);
  }

  /** How many undo steps {@code file} has. */
  synchronized int depth(Path file) {
    Deque<Version> versions = byFile.get(file);
    return versions == null ? 0 : versions.size();
  }

  private void replaceInAll(Version old, Version replacement) {
    Deque<Version> rebuilt = new ArrayDeque<>(all.size());
    for (Version v : all) {
      rebuilt.addLast(v == old ? replacement : v);
    }
    all.clear();
    all.addAll(rebuilt);
  }

  private void trim(Path file) throws IOException {
    Deque<Version> versions = byFile.get(file);
    while (versions.size() > MAX_PER_FILE) {
      Version oldest = versions.removeFirst();
      all.remove(oldest);
      drop(oldest);
    }
    while (bytes > maxBytes && !all.isEmpty()) {
      Version oldest = all.removeFirst();
      Deque<Version> owner = byFile.get(oldest.file());
      owner.remove(oldest);
      if (owner.isEmpty()) {
        byFile.remove(oldest.file());
      }
      drop(oldest);
    }
  }

  private void forget(Path file) throws IOException {
    Deque<Version> versions = byFile.remove(file);
    if (versions == null) {
      return;
    }
    for (Version v : versions) {
      all.remove(v);
      drop(v);
    }
  }

  private void drop(Version version) throws IOException {
    bytes -= version.bytes();
    if (version.content().isPresent()) {
      Files.deleteIfExists(version.content().get());
    }
  }

  /**
   * Writes {@code content[0, length)} to a new spool file, created by the one open that writes it:
   * ext4 starts writing back, on close, any file that was truncated and rewritten ({@code
   * auto_da_alloc}), which cost a disk write per edit when the file was created first and then
   * opened again with {@code O_TRUNC}.
   */
  private Path spool(byte[] content, int length) throws IOException {
    if (!Files.isDirectory(spool)) {
      Files.createDirectories(spool);
      Files.setPosixFilePermissions(spool, PosixFilePermissions.fromString("rwx------"));
    }
    while (true) {
      Path file = spool.resolve("version-" + ++sequence);
      try (OutputStream out = Files.newOutputStream(file, CREATE_NEW, WRITE)) {
        out.write(content, 0, length);
        return file;
      } catch (FileAlreadyExistsException e) {
        // Left by an agent that stopped without clearing its spool: the next number is free.
      }
    }
  }

  /** Removes every spooled version (the agent is stopping). */
  synchronized void clear() throws IOException {
    for (Iterator<Version> it = all.iterator(); it.hasNext(); ) {
      drop(it.next());
      it.remove();
    }
    byFile.clear();
    Files.deleteIfExists(spool);
  }
}
