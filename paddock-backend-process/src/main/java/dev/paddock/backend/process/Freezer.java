package dev.paddock.backend.process;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

/**
 * Freezes and kills every process of one sandbox: the agent and everything it started, including
 * commands in their own sessions. One instance per sandbox; calls are serialised by the backend's
 * caller (one sandbox's operations never overlap).
 */
interface Freezer {
  /** {@code cgroup-v1}, {@code cgroup-v2} or {@code signals}; stored in the sandbox's marker. */
  String kind();

  /** The sandbox's cgroup directory, if this freezer uses one. */
  Optional<Path> cgroup();

  /**
   * Puts a freshly spawned agent under this freezer; everything it forks afterwards inherits that.
   */
  void attach(long pid) throws IOException;

  /** Freezes every process and returns once the kernel reports them frozen. Idempotent. */
  void freeze();

  /** Thaws every process and returns once the kernel reports them running. Idempotent. */
  void thaw();

  /** Whether the sandbox is frozen now. */
  boolean frozen();

  /** The live processes this freezer controls (for a cgroup: its members). */
  List<Long> members();

  /** SIGKILLs every member (thawing as needed so they can die) and waits until they are gone. */
  void killAll();

  /** Removes the cgroup, if any; the sandbox must be empty. Idempotent. */
  void remove();
}
