package dev.paddock.backend.process;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** Reads and writes the small control files of one cgroup directory. */
final class CgroupFiles {
  private final Path dir;

  CgroupFiles(Path dir) {
    this.dir = dir;
  }

  Path dir() {
    return dir;
  }

  /** Creates the cgroup (the kernel fills in its files). Existing and empty is fine. */
  void create() throws IOException {
    Files.createDirectories(dir);
  }

  void write(String file, String value) {
    try {
      Files.writeString(dir.resolve(file), value, StandardCharsets.US_ASCII);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write '" + value + "' to " + dir.resolve(file), e);
    }
  }

  /** The file's content, or empty when the cgroup (or the file) does not exist. */
  Optional<String> read(String file) {
    try {
      return Optional.of(Files.readString(dir.resolve(file), StandardCharsets.US_ASCII).strip());
    } catch (NoSuchFileException e) {
      return Optional.empty();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + dir.resolve(file), e);
    }
  }

  /** The value of {@code key} in a flat keyed file such as {@code cgroup.events}. */
  Optional<String> keyed(String file, String key) {
    return read(file)
        .flatMap(
            text ->
                text.lines()
                    .filter(line -> line.startsWith(key + " "))
                    .map(line -> line.substring(key.length() + 1).strip())
                    .findFirst());
  }

  /** The pids in {@code cgroup.procs}; empty when the cgroup is gone. */
  List<Long> procs() {
    List<Long> pids = new ArrayList<>();
    read("cgroup.procs")
        .ifPresent(
            text ->
                text.lines()
                    .filter(l -> !l.isBlank())
                    .forEach(l -> pids.add(Long.parseLong(l.strip()))));
    return pids;
  }

  boolean exists() {
    return Files.isDirectory(dir);
  }

  /**
   * Removes the (empty) cgroup. A cgroup whose last process just died may report busy for a moment,
   * so this retries briefly.
   */
  void remove() {
    IOException[] last = new IOException[1];
    boolean gone =
        Poll.until(
            () -> {
              try {
                Files.deleteIfExists(dir);
                return true;
              } catch (IOException e) {
                last[0] = e;
                return false;
              }
            },
            Duration.ofSeconds(5));
    if (!gone) {
      throw new UncheckedIOException("cannot remove cgroup " + dir, last[0]);
    }
  }
}
