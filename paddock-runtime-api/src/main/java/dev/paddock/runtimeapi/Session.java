package dev.paddock.runtimeapi;

import dev.paddock.api.spi.RuntimeFailure;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeRequest;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One session of the runtime API: what it was started with and where it is. Changes happen under
 * {@link #lock} (one start, pause, resume or stop at a time per session); readers see the volatile
 * fields without it.
 */
final class Session {
  /** Where the session is, as far as this API did it; the backend says the rest. */
  enum Phase {
    /** {@code /start} (or a resume from error) is making the runtime. */
    STARTING,
    /** Made; its live state is the backend's. */
    UP,
    /** Paused by {@code /pause}. */
    PAUSED,
    /** The start (or resume) failed; {@link #failure()} says why. */
    FAILED
  }

  final ReentrantLock lock = new ReentrantLock();
  private final String runtimeId;
  private final Instant createdAt;
  private final RuntimeRequest request;
  private final Optional<String> client;
  private final boolean callerKeyed;
  private final int resourceFactor;

  // Written under lock.
  private volatile Phase phase = Phase.STARTING;
  private volatile Optional<RuntimeHandle> handle = Optional.empty();
  private volatile Optional<RuntimeFailure> failure = Optional.empty();
  private volatile long generation;
  private volatile Optional<String> remakeRefusal = Optional.empty();

  /**
   * @param request what the backend is asked to make (its digests are the caller's when {@code
   *     callerKeyed}, else this API's derived key's)
   * @param client the Paddock control plane's tag, when one started it
   * @param callerKeyed the caller manages the agent's keys (a Paddock control plane): this API
   *     never knows, returns or rotates them
   */
  Session(
      String runtimeId,
      Instant createdAt,
      RuntimeRequest request,
      Optional<String> client,
      boolean callerKeyed,
      int resourceFactor,
      long generation) {
    this.runtimeId = Objects.requireNonNull(runtimeId, "runtimeId");
    this.createdAt = createdAt;
    this.request = request;
    this.client = client;
    this.callerKeyed = callerKeyed;
    this.resourceFactor = resourceFactor;
    this.generation = generation;
  }

  String sessionId() {
    return request.sandboxId();
  }

  String runtimeId() {
    return runtimeId;
  }

  Instant createdAt() {
    return createdAt;
  }

  RuntimeRequest request() {
    return request;
  }

  Optional<String> client() {
    return client;
  }

  boolean callerKeyed() {
    return callerKeyed;
  }

  int resourceFactor() {
    return resourceFactor;
  }

  Phase phase() {
    return phase;
  }

  Optional<RuntimeHandle> handle() {
    return handle;
  }

  Optional<RuntimeFailure> failure() {
    return failure;
  }

  long generation() {
    return generation;
  }

  void up(RuntimeHandle runtime) {
    requireLock();
    handle = Optional.of(runtime);
    failure = Optional.empty();
    phase = Phase.UP;
  }

  void paused() {
    requireLock();
    phase = Phase.PAUSED;
  }

  void failed(RuntimeFailure why) {
    requireLock();
    failure = Optional.of(why);
    phase = Phase.FAILED;
  }

  void starting() {
    requireLock();
    phase = Phase.STARTING;
  }

  /**
   * Puts back where a session was before the runtime API restarted (read from its sessions file),
   * before any request can see it.
   *
   * @param refusal why the session cannot be made again from its request, if it cannot
   */
  void restore(
      Phase savedPhase,
      Optional<RuntimeHandle> savedHandle,
      Optional<RuntimeFailure> savedFailure,
      Optional<String> refusal) {
    lock.lock();
    try {
      phase = savedPhase;
      handle = savedHandle;
      failure = savedFailure;
      remakeRefusal = refusal;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Why this session's runtime cannot be made again from {@link #request()} (a resume from error),
   * if it cannot: a session restored after a restart lost its caller's environment values (not kept
   * at rest: they may be secrets), or was keyed with a secret this process does not have.
   */
  Optional<String> remakeRefusal() {
    return remakeRefusal;
  }

  /** Advances the key generation: the derived key of the one before is never valid again. */
  void advanceGeneration() {
    requireLock();
    generation++;
  }

  private void requireLock() {
    if (!lock.isHeldByCurrentThread()) {
      throw new IllegalStateException("session " + sessionId() + " changed without its lock");
    }
  }
}
