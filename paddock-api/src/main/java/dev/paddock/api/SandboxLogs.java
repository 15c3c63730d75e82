package dev.paddock.api;

import java.util.Optional;

/**
 * The kept log of each sandbox: its lifecycle events (created, started, paused, resumed, timed out,
 * failed with its class, archived, deleted) and its agent's output, also after the sandbox was
 * deleted, for a retention period. Owner-scoped as sandboxes are. Thread-safe.
 */
public interface SandboxLogs {
  /**
   * The log from byte {@code offset} on (at most a bounded piece; read again from {@link
   * LogChunk#nextOffset()} for more), with what the runtime printed since the last read.
   *
   * @return empty when there is no log of that sandbox or the caller may not see it
   */
  Optional<LogChunk> read(Caller caller, String sandboxId, long offset);
}
