package dev.paddock.backend.process;

import com.fasterxml.jackson.jr.ob.JSON;
import dev.paddock.api.spi.RuntimeHandle;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What finds a sandbox's agent again, in {@code paddock.json} and in {@link
 * RuntimeHandle#attributes()}: the pid with its start time (a pid alone may have been reused), the
 * port, and how it is frozen. The file also carries the labels {@code managed} and {@code
 * sandbox_id}.
 *
 * @param sandboxId the sandbox
 * @param pid the agent's pid, -1 in the pending marker written before it is spawned
 * @param startTime the agent's start time from {@code /proc/<pid>/stat} (clock ticks after boot),
 *     or -1 if it exited before it could be read
 * @param port the agent's port, 0 until it is ready
 * @param freezer the {@link Freezer#kind()}
 * @param cgroup the sandbox's cgroup directory, if its freezer has one
 * @param createdAt when the agent was started
 * @param limitCgroups the sandbox's cgroups that carry its limits (removed with it)
 * @param unenforced the requested limits this host could not enforce ({@link
 *     RuntimeHandle#UNENFORCED})
 * @param workingDir where the agent's commands start ({@link RuntimeHandle#WORKING_DIR}); empty in
 *     markers written before it was kept
 */
record Marker(
    String sandboxId,
    long pid,
    long startTime,
    int port,
    String freezer,
    Optional<Path> cgroup,
    Instant createdAt,
    List<Path> limitCgroups,
    List<String> unenforced,
    Optional<String> workingDir) {

  static final String PID = "pid";
  static final String START_TIME = "start_time";
  static final String PORT = "port";
  static final String FREEZER = "freezer";
  static final String CGROUP = "cgroup";
  static final String CREATED_AT = "created_at";
  static final String LIMIT_CGROUPS = "limit_cgroups";

  Marker {
    limitCgroups = List.copyOf(limitCgroups);
    unenforced = List.copyOf(unenforced);
  }

  Marker withPort(int newPort) {
    return new Marker(
        sandboxId,
        pid,
        startTime,
        newPort,
        freezer,
        cgroup,
        createdAt,
        limitCgroups,
        unenforced,
        workingDir);
  }

  /** The marker of the agent restarted in place of this one: same cgroups and directory. */
  Marker restarted(long newPid, long newStartTime, Instant at) {
    return new Marker(
        sandboxId,
        newPid,
        newStartTime,
        0,
        freezer,
        cgroup,
        at,
        limitCgroups,
        unenforced,
        workingDir);
  }

  RuntimeHandle toHandle(String backend) {
    return new RuntimeHandle(sandboxId, backend, attributes());
  }

  private Map<String, String> attributes() {
    Map<String, String> map = new LinkedHashMap<>();
    map.put(PID, Long.toString(pid));
    map.put(START_TIME, Long.toString(startTime));
    map.put(PORT, Integer.toString(port));
    map.put(FREEZER, freezer);
    cgroup.ifPresent(dir -> map.put(CGROUP, dir.toString()));
    map.put(CREATED_AT, createdAt.toString());
    if (!limitCgroups.isEmpty()) {
      map.put(LIMIT_CGROUPS, String.join(",", limitCgroups.stream().map(Path::toString).toList()));
    }
    if (!unenforced.isEmpty()) {
      map.put(RuntimeHandle.UNENFORCED, String.join(",", unenforced));
    }
    workingDir.ifPresent(dir -> map.put(RuntimeHandle.WORKING_DIR, dir));
    return map;
  }

  /**
   * Reads a handle this backend made.
   *
   * @throws IllegalArgumentException when an attribute is missing or malformed
   */
  static Marker fromHandle(RuntimeHandle handle) {
    return fromAttributes(handle.sandboxId(), handle.attributes());
  }

  private static Marker fromAttributes(String sandboxId, Map<String, ?> attributes) {
    try {
      return new Marker(
          sandboxId,
          Long.parseLong(required(attributes, PID)),
          Long.parseLong(required(attributes, START_TIME)),
          Integer.parseInt(required(attributes, PORT)),
          required(attributes, FREEZER),
          Optional.ofNullable(attributes.get(CGROUP)).map(Object::toString).map(Path::of),
          Optional.ofNullable(attributes.get(CREATED_AT))
              .map(Object::toString)
              .map(Instant::parse)
              .orElse(Instant.EPOCH),
          words(attributes.get(LIMIT_CGROUPS)).stream().map(Path::of).toList(),
          words(attributes.get(RuntimeHandle.UNENFORCED)),
          Optional.ofNullable(attributes.get(RuntimeHandle.WORKING_DIR)).map(Object::toString));
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(
          "not a process-backend handle of " + sandboxId + ": " + attributes, e);
    }
  }

  private static List<String> words(Object value) {
    if (value == null) {
      return List.of();
    }
    return Arrays.stream(value.toString().split(",")).filter(w -> !w.isBlank()).toList();
  }

  private static String required(Map<String, ?> attributes, String key) {
    Object value = attributes.get(key);
    if (value == null) {
      throw new IllegalArgumentException("missing " + key);
    }
    return value.toString();
  }

  /** Writes {@code file} atomically (a temporary file renamed over it). */
  void write(Path file) throws IOException {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("managed", true);
    json.put("sandbox_id", sandboxId);
    json.putAll(attributes());
    Path temp = file.resolveSibling(file.getFileName() + ".tmp");
    Files.writeString(temp, JSON.std.asString(json), StandardCharsets.UTF_8);
    Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  /** The marker in {@code file} if it is a managed marker of {@code sandboxId}. */
  static Optional<Marker> read(Path file, String sandboxId) {
    try {
      Map<String, Object> json = JSON.std.mapFrom(Files.readString(file, StandardCharsets.UTF_8));
      if (!Boolean.TRUE.equals(json.get("managed")) || !sandboxId.equals(json.get("sandbox_id"))) {
        return Optional.empty();
      }
      return Optional.of(fromAttributes(sandboxId, json));
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
  }
}
