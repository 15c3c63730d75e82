package dev.paddock.controlplane;

import dev.paddock.api.ExposedUrl;
import dev.paddock.api.SandboxInfo;
import dev.paddock.api.SandboxSettings;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeState;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.store.SandboxRecord;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns stored records into what callers see. A record in a steady state (RUNNING or PAUSED) with a
 * runtime handle shows its runtime's live status, asked of the backend; every other record shows
 * its stored status and detail (STARTING while a start or resume is under way, ERROR with its safe
 * detail, MISSING). URLs are shown only while RUNNING; keys only in the reply that issued them.
 */
final class SandboxViews {
  private static final Logger LOG = LoggerFactory.getLogger(SandboxViews.class);

  /**
   * How long a shown live status counts as fresh. Listing 50 running sandboxes would otherwise
   * probe 50 agents per request. An older observation of the same record version is still shown
   * while one background probe refreshes it (stale-while-revalidate), so listings never wait on
   * probes once a sandbox has been seen; any change made through this control plane bumps the
   * record's version, which is never served from here.
   */
  static final long DISPLAY_TTL_NANOS = 1_000_000_000L;

  private final SandboxBackend backend;
  private final Map<String, Observed> observed = new ConcurrentHashMap<>();

  /** A live state seen for one version of a record, and when; one refresh at a time. */
  private record Observed(
      long version, RuntimeState state, long atNanos, AtomicBoolean refreshing) {}

  SandboxViews(SandboxBackend backend) {
    this.backend = backend;
  }

  /** The record as callers see it now, without a key. */
  SandboxInfo live(SandboxRecord record) {
    boolean steady =
        record.status() == SandboxStatus.RUNNING || record.status() == SandboxStatus.PAUSED;
    if (!steady || record.runtime().isEmpty()) {
      return info(record, record.status(), List.of(), record.statusDetail(), Optional.empty());
    }
    RuntimeState state = displayed(record);
    Optional<String> detail = state.failure().map(f -> StartFailures.detail(f, record.id()));
    state.failure().ifPresent(f -> LOG.debug("sandbox {} is in error: {}", record.id(), f));
    return info(record, state.status(), state.urls(), detail, Optional.empty());
  }

  private RuntimeState displayed(SandboxRecord record) {
    Observed seen = observed.get(record.id());
    if (seen != null && seen.version() == record.version()) {
      if (System.nanoTime() - seen.atNanos() >= DISPLAY_TTL_NANOS
          && seen.refreshing().compareAndSet(false, true)) {
        Thread.ofVirtual().name("paddock-status-" + record.id()).start(() -> observe(record));
      }
      return seen.state();
    }
    return observe(record);
  }

  private RuntimeState observe(SandboxRecord record) {
    RuntimeState state = inspect(record.runtime().get(), record.status());
    observed.put(
        record.id(), new Observed(record.version(), state, System.nanoTime(), new AtomicBoolean()));
    if (observed.size() > 100_000) {
      observed.clear(); // bounded: entries of sandboxes deleted elsewhere go eventually
    }
    return state;
  }

  /** Forgets what was seen of a sandbox (it was deleted). */
  void forget(String sandboxId) {
    observed.remove(sandboxId);
  }

  /** The reply that issues {@code key}: the only place a key is ever shown. */
  SandboxInfo issued(SandboxRecord record, List<ExposedUrl> urls, String key) {
    return info(record, record.status(), urls, record.statusDetail(), Optional.of(key));
  }

  /** The live state of a runtime; when the backend cannot tell, the stored status without URLs. */
  RuntimeState inspect(RuntimeHandle handle, SandboxStatus stored) {
    try {
      return backend.inspect(handle);
    } catch (RuntimeException e) {
      LOG.warn("cannot inspect sandbox {}; showing its stored status", handle.sandboxId(), e);
      return new RuntimeState(stored, List.of(), Optional.empty());
    }
  }

  /** The agent-server URL of a runtime, when it is RUNNING and exposes one. */
  Optional<String> agentUrl(RuntimeHandle handle) {
    RuntimeState state = inspect(handle, SandboxStatus.ERROR);
    if (state.status() != SandboxStatus.RUNNING) {
      return Optional.empty();
    }
    return state.urls().stream()
        .filter(u -> u.name().equals(ExposedUrl.AGENT_SERVER))
        .map(ExposedUrl::url)
        .findFirst();
  }

  private static SandboxInfo info(
      SandboxRecord record,
      SandboxStatus status,
      List<ExposedUrl> urls,
      Optional<String> detail,
      Optional<String> key) {
    return new SandboxInfo(
        record.id(),
        record.ownerUserId(),
        record.specId(),
        status,
        key,
        status == SandboxStatus.RUNNING ? urls : List.of(),
        record.createdAt(),
        detail,
        settings(record),
        record.timeoutAt(),
        record.lastActivityAt(),
        unenforced(record));
  }

  /** The stored settings, with the working directory the runtime reported where it did. */
  private static SandboxSettings settings(SandboxRecord record) {
    return record
        .runtime()
        .flatMap(RuntimeHandle::workingDir)
        .map(dir -> record.settings().withWorkingDir(dir))
        .orElse(record.settings());
  }

  /** The limits the backend said it could not enforce ({@link RuntimeHandle#UNENFORCED}). */
  private static List<String> unenforced(SandboxRecord record) {
    return record.runtime().map(RuntimeHandle::unenforcedLimits).orElse(List.of());
  }
}
