package dev.paddock.backend.process;

import com.fasterxml.jackson.jr.ob.JSON;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * How a sandbox's agent was launched, kept in {@code agent.launch.json} (owner-only) beside the
 * marker: what a resume needs to start the agent again on the same directory after it died (killed,
 * OOM-killed, crashed), like a stopped container's configuration. It holds the command line, the
 * environment the spec and request gave, and the admin key's digest; never a key.
 *
 * @param argv the agent's command line
 * @param env the agent's whole environment
 * @param adminDigest the admin key's SHA-256 digest (hex), what a restarted agent is given: the
 *     control plane hands it a new session key through it
 */
record AgentLaunch(List<String> argv, Map<String, String> env, String adminDigest) {
  AgentLaunch {
    argv = List.copyOf(argv);
    env = Map.copyOf(env);
  }

  /** Writes {@code file} atomically, readable by this user only. */
  void write(Path file) throws IOException {
    Map<String, Object> json = new LinkedHashMap<>();
    json.put("argv", argv);
    json.put("env", env);
    json.put("admin_digest", adminDigest);
    Path temp = file.resolveSibling(file.getFileName() + ".tmp");
    Files.deleteIfExists(temp);
    Files.createFile(
        temp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
    Files.writeString(temp, JSON.std.asString(json), StandardCharsets.UTF_8);
    Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
  }

  /** The launch in {@code file}; empty when it is absent or unreadable. */
  static Optional<AgentLaunch> read(Path file) {
    try {
      Map<String, Object> json = JSON.std.mapFrom(Files.readString(file, StandardCharsets.UTF_8));
      List<String> argv = ((List<?>) json.get("argv")).stream().map(String::valueOf).toList();
      Map<String, String> env = new LinkedHashMap<>();
      ((Map<?, ?>) json.get("env"))
          .forEach((k, v) -> env.put(String.valueOf(k), String.valueOf(v)));
      return Optional.of(new AgentLaunch(argv, env, String.valueOf(json.get("admin_digest"))));
    } catch (IOException | RuntimeException e) {
      return Optional.empty();
    }
  }
}
