package dev.paddock.controlplane;

import dev.paddock.api.SandboxException;
import dev.paddock.store.ConflictException;
import dev.paddock.store.SandboxRecord;
import dev.paddock.store.SandboxStore;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * Optimistic writes of sandbox records: read, change, write if the version is unchanged, and on a
 * conflict read again and re-apply. Every change passed here is a pure function of the record it
 * gets, so re-applying it to a newer version is safe.
 */
final class SandboxRecords {
  private static final int ATTEMPTS = 10;

  private final SandboxStore store;

  SandboxRecords(SandboxStore store) {
    this.store = store;
  }

  /** Applies {@code change} to the stored record; empty when the record does not exist (now). */
  Optional<SandboxRecord> change(String sandboxId, UnaryOperator<SandboxRecord> change) {
    ConflictException last = null;
    for (int attempt = 0; attempt < ATTEMPTS; attempt++) {
      Optional<SandboxRecord> current = store.find(sandboxId);
      if (current.isEmpty()) {
        return Optional.empty();
      }
      try {
        return Optional.of(store.update(change.apply(current.get())));
      } catch (ConflictException e) {
        last = e;
      }
    }
    throw new SandboxException(
        "sandbox " + sandboxId + " kept changing under concurrent updates; try again",
        Optional.of(sandboxId),
        last);
  }
}
