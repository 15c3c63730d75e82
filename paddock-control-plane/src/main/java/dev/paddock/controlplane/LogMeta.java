package dev.paddock.controlplane;

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Instant;
import java.util.Optional;
import java.util.Properties;

/**
 * What {@link KeptLogs} keeps beside a sandbox's log ({@code <id>.meta}, a properties file): its
 * owner (to scope reads after the sandbox is gone), how many bytes of the agent's output were
 * copied, whether the cap was reached, when it was deleted. Written whole, by rename.
 */
record LogMeta(
    Optional<String> owner, long agentOffset, boolean capped, Optional<Instant> deletedAt) {
  static final LogMeta NONE = new LogMeta(Optional.empty(), 0, false, Optional.empty());

  /** The meta in {@code file}; {@link #NONE} when absent or unreadable. */
  static LogMeta read(Path file) {
    Properties p = new Properties();
    try (Reader in = Files.newBufferedReader(file)) {
      p.load(in);
      return new LogMeta(
          Optional.ofNullable(p.getProperty("owner")),
          Long.parseLong(p.getProperty("agent_offset", "0")),
          Boolean.parseBoolean(p.getProperty("capped", "false")),
          Optional.ofNullable(p.getProperty("deleted_at")).map(Instant::parse));
    } catch (IOException | RuntimeException e) {
      return NONE;
    }
  }

  void write(Path file) throws IOException {
    Properties p = new Properties();
    owner.ifPresent(o -> p.setProperty("owner", o));
    p.setProperty("agent_offset", Long.toString(agentOffset));
    p.setProperty("capped", Boolean.toString(capped));
    deletedAt.ifPresent(d -> p.setProperty("deleted_at", d.toString()));
    Path temp = file.resolveSibling(file.getFileName() + ".tmp");
    try (Writer out = Files.newBufferedWriter(temp)) {
      p.store(out, null);
    }
    Files.move(temp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  LogMeta withOwner(Optional<String> newOwner) {
    return new LogMeta(newOwner, agentOffset, capped, deletedAt);
  }

  LogMeta withAgentOffset(long offset) {
    return new LogMeta(owner, offset, capped, deletedAt);
  }

  LogMeta withCapped() {
    return new LogMeta(owner, agentOffset, true, deletedAt);
  }

  LogMeta withDeletedAt(Instant at) {
    return new LogMeta(owner, agentOffset, capped, Optional.of(at));
  }
}
