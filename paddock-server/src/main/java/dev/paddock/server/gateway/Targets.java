package dev.paddock.server.gateway;

import dev.paddock.api.ExposedUrl;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.RuntimeState;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.store.SandboxRecord;
import dev.paddock.store.SandboxStore;
import dev.paddock.store.StoreException;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Where a sandbox's traffic goes, decided at the door: its state comes from the store on every
 * request (a paused sandbox is refused without touching its frozen agent). Every change to a
 * sandbox record bumps its version, so each request reads only the stored version (one column by
 * key) and reuses the record, and the agent address the backend gave for it, while that version is
 * unchanged; a new version is read in full, and a RUNNING one asks the backend for its agent again.
 * Nothing is kept that a restart would need. While the store cannot be read, a sandbox last seen
 * RUNNING keeps its agent route (stale). Thread-safe.
 */
final class Targets {
  private static final int MAX_KNOWN = 20_000;

  private final SandboxStore store;
  private final SandboxBackend backend;
  private final Map<String, Lookup> known = new ConcurrentHashMap<>();

  /**
   * The outcome of a lookup: a running sandbox's record and agent, or why there is none; {@code
   * stale} when the store could not be read and this is what the last lookup found.
   */
  record Lookup(
      Optional<SandboxRecord> record,
      SandboxStatus status,
      Optional<InetSocketAddress> agent,
      boolean stale) {
    Lookup(
        Optional<SandboxRecord> record, SandboxStatus status, Optional<InetSocketAddress> agent) {
      this(record, status, agent, false);
    }
  }

  Targets(SandboxStore store, SandboxBackend backend) {
    this.store = store;
    this.backend = backend;
  }

  /**
   * The agent address of a RUNNING record, or the status that stands in the way. While the store
   * cannot be read: the last lookup that found the sandbox RUNNING with its agent, marked stale
   * (its agent still checks every request's session key itself).
   *
   * @throws StoreException when the store cannot be read and no such lookup is kept
   */
  Lookup lookup(String sandboxId) {
    OptionalLong version;
    try {
      version = store.version(sandboxId);
    } catch (StoreException e) {
      Lookup cached = known.get(sandboxId);
      if (cached == null || cached.agent().isEmpty()) {
        throw e;
      }
      return new Lookup(cached.record(), cached.status(), cached.agent(), true);
    }
    if (version.isEmpty()) {
      known.remove(sandboxId);
      return new Lookup(Optional.empty(), SandboxStatus.MISSING, Optional.empty());
    }
    Lookup cached = known.get(sandboxId);
    if (cached != null && cached.record().orElseThrow().version() == version.getAsLong()) {
      return cached;
    }
    Optional<SandboxRecord> found = store.find(sandboxId);
    if (found.isEmpty()) {
      return new Lookup(found, SandboxStatus.MISSING, Optional.empty());
    }
    return fresh(found.get());
  }

  private Lookup fresh(SandboxRecord record) {
    if (record.status() != SandboxStatus.RUNNING || record.runtime().isEmpty()) {
      // Decided by the record alone, so it holds until the record changes.
      return keep(new Lookup(Optional.of(record), record.status(), Optional.empty()));
    }
    RuntimeState state = backend.inspect(record.runtime().get());
    Optional<InetSocketAddress> agent =
        state.urls().stream()
            .filter(u -> u.name().equals(ExposedUrl.AGENT_SERVER))
            .findFirst()
            .map(u -> address(u.url()));
    if (state.status() != SandboxStatus.RUNNING || agent.isEmpty()) {
      // The runtime's live state, not the record's: asked again on the next request.
      return new Lookup(Optional.of(record), state.status(), Optional.empty());
    }
    return keep(new Lookup(Optional.of(record), SandboxStatus.RUNNING, agent));
  }

  private Lookup keep(Lookup lookup) {
    if (known.size() > MAX_KNOWN) {
      known.clear(); // bounded: entries of sandboxes deleted elsewhere go eventually
    }
    known.put(lookup.record().orElseThrow().id(), lookup);
    return lookup;
  }

  private static InetSocketAddress address(String url) {
    URI uri = URI.create(url);
    return new InetSocketAddress(uri.getHost(), uri.getPort());
  }
}
