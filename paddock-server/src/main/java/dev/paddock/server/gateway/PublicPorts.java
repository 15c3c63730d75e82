package dev.paddock.server.gateway;

import dev.paddock.http.HttpError;
import dev.paddock.store.ConflictException;
import dev.paddock.store.SandboxRecord;
import dev.paddock.store.SandboxStore;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The owner's public ports of a sandbox, kept in its stored settings: an optimistic write (read,
 * change, write if the version is unchanged, else read again), like every other change to a sandbox
 * record, so a concurrent pause or resume is never overwritten. Stateless and thread-safe.
 */
final class PublicPorts {
  private static final int ATTEMPTS = 10;

  private final SandboxStore store;

  PublicPorts(SandboxStore store) {
    this.store = store;
  }

  Set<Integer> set(String sandboxId, int port, boolean open) {
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
      SandboxRecord current =
          store
              .find(sandboxId)
              .orElseThrow(() -> HttpError.notFound("sandbox " + sandboxId + " not found"));
      Set<Integer> ports = new TreeSet<>(current.settings().publicPorts());
      boolean changed = open ? ports.add(port) : ports.remove(port);
      if (!changed) {
        return current.settings().publicPorts();
      }
      Optional<SandboxRecord> written = write(current, ports);
      if (written.isPresent()) {
        return written.get().settings().publicPorts();
      }
    }
    throw HttpError.conflict(
        "sandbox " + sandboxId + " kept changing under concurrent updates; try again");
  }

  private Optional<SandboxRecord> write(SandboxRecord current, Set<Integer> ports) {
    try {
      return Optional.of(
          store.update(current.withSettings(current.settings().withPublicPorts(ports))));
    } catch (ConflictException e) {
      return Optional.empty();
    }
  }
}
