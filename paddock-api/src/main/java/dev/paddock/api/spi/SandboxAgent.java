package dev.paddock.api.spi;

import java.io.Closeable;
import java.io.InputStream;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the control plane asks of a sandbox's agent-server itself, beyond the runtime: replace the
 * session keys it accepts, stream a workspace archive, describe its environment, tell how long it
 * has been idle. Obtained from {@link SandboxBackend#agent}, so a backend decides how these reach
 * the agent (straight over HTTP by default, routed through a runtime API, or refused). Thread-safe.
 */
public interface SandboxAgent {
  /**
   * Makes the agent accept exactly the session keys with these SHA-256 hex digests (none: it
   * accepts no key). Short timeouts: a frozen or dead agent must not hold up a pause or delete.
   *
   * @throws AgentCallException when the agent cannot be reached or refuses
   */
  void replaceSessionKeys(List<String> digests);

  /**
   * Opens the workspace archive in {@code format} ({@code tar.gz} or {@code git-delta}); empty when
   * the agent has nothing in that format (e.g. no git repository). The caller reads and closes the
   * stream; it never holds the whole archive.
   *
   * @param defaultExcludes whether the agent drops its default excludes (build output, caches)
   * @param timeout until the archive's headers arrive (the caller bounds the body)
   * @throws AgentCallException when the agent cannot be reached or answers an error
   */
  Optional<Archive> openArchive(String format, boolean defaultExcludes, Duration timeout);

  /**
   * The agent's {@code os} and {@code runtimes} (as JSON values), for archive manifests; empty when
   * it cannot tell within {@code timeout}. Never throws (an interruption keeps the thread's flag
   * set).
   */
  Optional<Map<String, Object>> environment(Duration timeout);

  /** How long the agent has had no API call; empty when it cannot tell. Never throws. */
  Optional<Duration> idleTime();

  /**
   * An agent every call of which is refused with {@code reason} (for the log): for a backend whose
   * runtimes cannot be reached that way. {@link #environment} and {@link #idleTime} answer empty.
   */
  static SandboxAgent refusing(String reason) {
    return new RefusingAgent(reason);
  }

  /**
   * An archive being streamed from the agent.
   *
   * @param body the archive's bytes; close it (or this) when done
   * @param repository what the agent said about the workspace's git repository ({@code
   *     base_commit}, {@code repo_remote}, {@code branch}, {@code head_commit}; decoded), possibly
   *     empty
   */
  record Archive(InputStream body, Map<String, String> repository) implements Closeable {
    public Archive {
      java.util.Objects.requireNonNull(body, "body");
      repository = Map.copyOf(repository);
    }

    @Override
    public void close() throws java.io.IOException {
      body.close();
    }
  }
}
