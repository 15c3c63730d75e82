package dev.paddock.server.gateway;

import dev.paddock.api.ExposedUrl;
import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.RuntimeState;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.store.SandboxRecord;
import dev.paddock.store.SandboxStore;
import java.net.InetSocketAddress;
import java.net.URI;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Where a sandbox's traffic goes, decided at the door: its state comes from the store on every
 * request (a paused sandbox is refused without touching its frozen agent), its agent address from
 * the backend once per record version (every pause, resume or restart bumps the version, so a
 * cached address is never one of an older runtime). Nothing is kept that a restart would need.
 * Thread-safe.
 */
final class Targets {
  private final SandboxStore store;
  private final SandboxBackend backend;
  private final Map<String, Known> known = new ConcurrentHashMap<>();

  private record Known(long version, InetSocketAddress agent) {}

  /** The outcome of a lookup: a running sandbox's record and agent, or why there is none. */
  record Lookup(
      Optional<SandboxRecord> record, SandboxStatus status, Optional<InetSocketAddress> agent) {}

  Targets(SandboxStore store, SandboxBackend backend) {
    this.store = store;
    this.backend = backend;
  }

  Optional<SandboxRecord> record(String sandboxId) {
    return store.find(sandboxId);
  }

  /** The agent address of a RUNNING record, or the status that stands in the way. */
  Lookup lookup(String sandboxId) {
    Optional<SandboxRecord> found = store.find(sandboxId);
    if (found.isEmpty()) {
      return new Lookup(found, SandboxStatus.MISSING, Optional.empty());
    }
    SandboxRecord record = found.get();
    if (record.status() != SandboxStatus.RUNNING || record.runtime().isEmpty()) {
      return new Lookup(found, record.status(), Optional.empty());
    }
    Known cached = known.get(sandboxId);
    if (cached != null && cached.version() == record.version()) {
      return new Lookup(found, SandboxStatus.RUNNING, Optional.of(cached.agent()));
    }
    RuntimeState state = backend.inspect(record.runtime().get());
    Optional<InetSocketAddress> agent =
        state.urls().stream()
            .filter(u -> u.name().equals(ExposedUrl.AGENT_SERVER))
            .findFirst()
            .map(u -> address(u.url()));
    if (state.status() != SandboxStatus.RUNNING || agent.isEmpty()) {
      return new Lookup(found, state.status(), Optional.empty());
    }
    if (known.size() > 100_000) {
      known.clear(); // bounded: entries of sandboxes deleted elsewhere go eventually
    }
    known.put(sandboxId, new Known(record.version(), agent.get()));
    return new Lookup(found, SandboxStatus.RUNNING, agent);
  }

  private static InetSocketAddress address(String url) {
    URI uri = URI.create(url);
    return new InetSocketAddress(uri.getHost(), uri.getPort());
  }
}
