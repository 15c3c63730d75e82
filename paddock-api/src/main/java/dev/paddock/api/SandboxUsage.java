package dev.paddock.api;

import java.util.List;
import java.util.Optional;

/**
 * Resource use of running sandboxes, read from their runtimes when asked. Owner-scoped as sandboxes
 * are. Thread-safe.
 */
public interface SandboxUsage {
  /**
   * Reads the sandbox's resource use now (one reading from its runtime).
   *
   * @return empty when there is no such sandbox or the caller may not see it
   * @throws SandboxNotRunningException when it is not RUNNING (or stopped while being read)
   */
  Optional<SandboxStats> stats(Caller caller, String sandboxId);

  /**
   * A reading of every RUNNING sandbox, at most {@code max} of them (the oldest sandboxes first),
   * read in parallel, for metrics: a sandbox whose runtime does not answer in time is left out.
   */
  List<SandboxStats> running(int max);
}
