package dev.paddock.api;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Starts, pauses, resumes, deletes and finds sandboxes, whatever backend runs them. Every method
 * taking a {@link Caller} is scoped to what that caller may see: another user's sandbox is "not
 * found". Implementations are thread-safe.
 *
 * <p>Session keys: a key is issued at start and on resume, returned in that reply and afterwards to
 * the owner only ({@link #sessionKey}), stored only as a SHA-256 hash, usable only while RUNNING;
 * pause revokes it, delete revokes it first.
 */
public interface SandboxService {
  /** The caller's sandboxes, newest first. */
  default Page<SandboxInfo> search(Caller caller, PageRequest page) {
    return search(caller, SandboxFilter.ALL, page);
  }

  /** The caller's sandboxes matching {@code filter}, newest first. */
  Page<SandboxInfo> search(Caller caller, SandboxFilter filter, PageRequest page);

  Optional<SandboxInfo> get(Caller caller, String sandboxId);

  /** One entry per id, in order; empty where the sandbox does not exist or is not visible. */
  List<Optional<SandboxInfo>> batchGet(Caller caller, List<String> sandboxIds);

  /** The RUNNING sandbox this session key belongs to (for sandboxes calling back). */
  Optional<SandboxInfo> getBySessionKey(String sessionKey);

  /**
   * Creates a sandbox as {@code request} asks and begins starting it; returns at once, usually
   * STARTING, with the session key.
   *
   * @throws CapacityExceededException past a capacity limit
   * @throws InvalidRequestException for a value out of range or over an operator's maximum
   * @throws IllegalArgumentException for an unknown spec, an image not allowed, or a taken or
   *     malformed id
   */
  SandboxInfo start(Caller caller, StartRequest request);

  /** {@link #start(Caller, StartRequest)} with only a spec and an id (OpenHands' create). */
  default SandboxInfo start(Caller caller, Optional<String> specId, Optional<String> sandboxId) {
    StartRequest.Builder request = StartRequest.builder();
    specId.ifPresent(request::specId);
    sandboxId.ifPresent(request::sandboxId);
    return start(caller, request.build());
  }

  /**
   * The current session key of a RUNNING sandbox, to its owner only (never to an admin looking at
   * another user's sandbox); empty otherwise.
   */
  Optional<String> sessionKey(Caller caller, String sandboxId);

  /**
   * Replaces the labels of a sandbox the caller may see; empty when not found.
   *
   * @throws InvalidRequestException for labels outside the grammar or bounds
   */
  Optional<SandboxInfo> setLabels(Caller caller, String sandboxId, Map<String, String> labels);

  /**
   * Moves the end of a sandbox's lifetime to {@code timeout} from now (E2B's {@code setTimeout});
   * empty when not found.
   *
   * @throws InvalidRequestException when {@code timeout} exceeds the operator's maximum
   */
  Optional<SandboxInfo> keepAlive(Caller caller, String sandboxId, Duration timeout);

  /**
   * Renews a sandbox's lifetime by the timeout it was created with (the operator's default when it
   * had none); empty when not found.
   *
   * @throws InvalidRequestException when it has no timeout and there is no default
   */
  Optional<SandboxInfo> keepAlive(Caller caller, String sandboxId);

  /** Freezes every process; revokes the key. False when not found. Idempotent. */
  boolean pause(Caller caller, String sandboxId);

  /** Thaws (or restarts) the same workspace with a new key, carried by the reply. */
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
   * Archives the workspace to the archive store (a no-op returning true when archiving is off).
   * False only when archiving is required and failed: the caller must then keep the sandbox.
   */
  boolean archiveWorkspace(Caller caller, String sandboxId, Optional<String> conversationId);
}
