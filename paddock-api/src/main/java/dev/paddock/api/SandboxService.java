package dev.paddock.api;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * Starts, pauses, resumes, deletes and finds sandboxes, whatever backend runs them. Every method
 * taking a {@link Caller} is scoped to what that caller may see: another user's sandbox is "not
 * found". Implementations are thread-safe.
 *
 * <p>Session keys: a key is issued at start and on resume, returned once in that reply, stored only
 * as a SHA-256 hash, usable only while RUNNING; pause revokes it, delete revokes it first.
 */
public interface SandboxService {
  /** The caller's sandboxes, newest first. */
  Page<SandboxInfo> search(Caller caller, PageRequest page);

  Optional<SandboxInfo> get(Caller caller, String sandboxId);

  /** One entry per id, in order; empty where the sandbox does not exist or is not visible. */
  List<Optional<SandboxInfo>> batchGet(Caller caller, List<String> sandboxIds);

  /** The RUNNING sandbox this session key belongs to (for sandboxes calling back). */
  Optional<SandboxInfo> getBySessionKey(String sessionKey);

  /**
   * Creates a sandbox from {@code specId} (default spec when empty) with {@code sandboxId} (a new
   * id when empty) and begins starting it; returns at once, usually STARTING, with the session key.
   *
   * @throws CapacityExceededException past a capacity limit
   * @throws IllegalArgumentException for an unknown spec or a taken or malformed id
   */
  SandboxInfo start(Caller caller, Optional<String> specId, Optional<String> sandboxId);

  /** Freezes every process; revokes the key. False when not found. Idempotent. */
  boolean pause(Caller caller, String sandboxId);

  /** Thaws (or restarts) the same workspace with a new key, returned by {@link #get} once. */
  Optional<SandboxInfo> resume(Caller caller, String sandboxId);

  /** Revokes the key, then removes the runtime and its workspace. False when not found. */
  boolean delete(Caller caller, String sandboxId);

  /**
   * Waits until the sandbox is RUNNING and its agent answers.
   *
   * @throws SandboxStartException when it ended in ERROR or did not get there in time
   */
  SandboxInfo waitUntilRunning(Caller caller, String sandboxId, Duration timeout);

  /**
   * Archives the workspace to the archive store (a no-op returning true until archives land). False
   * only when archiving is required and failed: the caller must then keep the sandbox.
   */
  boolean archiveWorkspace(Caller caller, String sandboxId, Optional<String> conversationId);
}
