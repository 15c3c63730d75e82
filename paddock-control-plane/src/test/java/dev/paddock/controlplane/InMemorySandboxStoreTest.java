package dev.paddock.controlplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.paddock.api.SandboxStatus;
import dev.paddock.store.ConflictException;
import dev.paddock.store.SandboxRecord;
import java.time.Instant;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The stand-in store must be as strict as the real one, or the control plane's tests lie. */
class InMemorySandboxStoreTest {
  private final InMemorySandboxStore store = new InMemorySandboxStore();

  private static SandboxRecord record(String id) {
    Instant now = Instant.parse("2025-01-01T00:00:00Z");
    return new SandboxRecord(
        id,
        Optional.of("alice"),
        "spec",
        SandboxStatus.STARTING,
        Optional.empty(),
        Optional.empty(),
        Optional.empty(),
        now,
        now,
        0);
  }

  @Test
  void updateIsACompareAndSetOnTheVersion() {
    SandboxRecord inserted = store.insert(record("a"));
    SandboxRecord updated =
        store.update(inserted.withStatus(SandboxStatus.RUNNING, Optional.empty()));

    assertThat(updated.version()).isEqualTo(1);
    assertThatThrownBy(
            () -> store.update(inserted.withStatus(SandboxStatus.ERROR, Optional.empty())))
        .isInstanceOf(ConflictException.class);
    assertThat(store.find("a").orElseThrow().status()).isEqualTo(SandboxStatus.RUNNING);

    store.delete("a");
    assertThatThrownBy(() -> store.update(updated)).isInstanceOf(ConflictException.class);
  }

  @Test
  void takenIdsConflict() {
    store.insert(record("a"));
    assertThatThrownBy(() -> store.insert(record("a"))).isInstanceOf(ConflictException.class);
  }
}
