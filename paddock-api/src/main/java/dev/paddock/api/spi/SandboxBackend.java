package dev.paddock.api.spi;

import java.util.List;
import java.util.Optional;

/**
 * Makes sandboxes real on one kind of runtime. Everything it creates carries the labels {@code
 * paddock.managed=true} and {@code paddock.sandbox-id=<id>} (as the runtime allows), so {@link
 * #list} can find it after a control-plane restart. Thread-safe; calls for different sandboxes may
 * run concurrently, calls for one sandbox are serialised by the control plane.
 */
public interface SandboxBackend extends AutoCloseable {
  /** The backend's name, as stored in {@link RuntimeHandle#backend()}. */
  String name();

  /**
   * Starts a runtime and returns once its agent-server answers. On failure it removes whatever it
   * half-made and throws.
   *
   * @throws RuntimeStartException classified failure
   */
  RuntimeHandle start(RuntimeRequest request);

  /** The runtime's live state; MISSING when it is gone. Never throws for a vanished runtime. */
  RuntimeState inspect(RuntimeHandle handle);

  /**
   * Freezes every process of the runtime (a {@linkplain RuntimeHandle#launchKeyed() launch-keyed}
   * one is stopped instead: its key cannot be revoked at the agent). Idempotent.
   */
  void pause(RuntimeHandle handle);

  /**
   * Brings a paused (or stopped) runtime back with the same workspace; returns once its agent
   * answers. The handle may change (a restarted process has a new pid).
   *
   * @throws RuntimeStartException when it cannot come back
   */
  RuntimeHandle resume(RuntimeHandle handle);

  /**
   * Brings back a paused runtime whose agent takes its session key at launch only ({@link
   * RuntimeHandle#launchKeyed()}): a new runtime on the same workspace, launched with {@code
   * sessionKey}, so no earlier key is accepted; returns once its agent answers. The default refuses
   * (a backend that never reports such runtimes need not implement it).
   *
   * @throws RuntimeStartException when it cannot come back
   */
  default RuntimeHandle relaunch(RuntimeHandle handle, String sessionKey) {
    throw new RuntimeStartException(
        new RuntimeFailure(
            RuntimeFailure.Kind.UNKNOWN,
            name() + " backend cannot relaunch " + handle.sandboxId()));
  }

  /** Stops the runtime (TERM, grace, KILL) and removes it and its workspace. Idempotent. */
  void destroy(RuntimeHandle handle);

  /** Every runtime this backend manages that still exists (for adoption after a restart). */
  List<RuntimeHandle> list();

  /**
   * Tears down whatever this backend still holds of {@code sandboxId} although no handle of it was
   * recorded: a start cut short (by a control-plane crash) before it reported its runtime. A delete
   * of a record without a runtime calls it while holding the sandbox's claim, so no start of it is
   * under way anywhere; afterwards nothing of the sandbox is left. The default destroys what {@link
   * #list} names for it.
   */
  default void reclaim(String sandboxId) {
    for (RuntimeHandle handle : list()) {
      if (handle.sandboxId().equals(sandboxId)) {
        destroy(handle);
      }
    }
  }

  /**
   * Every runtime this backend manages that still exists, each with its live state: what the
   * control plane's reconcile loop reads every few seconds. The default lists, then inspects each
   * runtime (one call per runtime); a backend whose runtime answers in bulk (one engine or API call
   * for all) overrides it. A runtime that vanishes between the two steps is left out or reported
   * MISSING. Never throws for a vanished runtime.
   */
  default List<ListedRuntime> listWithState() {
    return list().stream().map(handle -> new ListedRuntime(handle, inspect(handle))).toList();
  }

  /**
   * How the control plane reaches this runtime's agent-server for what only the agent can do (key
   * rotation, archive streams, its environment and idle time; see {@link SandboxAgent}). The
   * default returns {@code direct}: the control plane's own HTTP client of the agent URL the
   * runtime reports, authenticated with the sandbox's admin key. A backend whose agents are not
   * reachable that way returns its own route (e.g. through a runtime API), or {@link
   * SandboxAgent#refusing} to refuse.
   *
   * @param handle a runtime the backend reported RUNNING
   * @param direct the standard HTTP route to its agent
   */
  default SandboxAgent agent(RuntimeHandle handle, SandboxAgent direct) {
    return direct;
  }

  /**
   * The runtime's resource use now, read once (one-shot); empty when this backend cannot read it or
   * the runtime is gone. Default: empty. Never throws for a vanished runtime.
   */
  default Optional<RuntimeStats> stats(RuntimeHandle handle) {
    return Optional.empty();
  }

  /**
   * What the runtime's agent printed (its standard output and error, as the runtime keeps them),
   * from byte {@code offset} on, at most {@code maxBytes}; an empty array when nothing follows that
   * offset. Empty when this backend keeps no such log or the runtime is gone. The control plane
   * copies it into the sandbox's kept log before it destroys the runtime. Default: empty. Never
   * throws for a vanished runtime.
   */
  default Optional<byte[]> agentLog(RuntimeHandle handle, long offset, int maxBytes) {
    return Optional.empty();
  }

  /** Releases the backend's own resources; runtimes keep running. */
  @Override
  default void close() {}
}
