package dev.paddock.backend.process;

import static org.assertj.core.api.Assertions.assertThat;

import dev.paddock.api.SandboxStatus;
import dev.paddock.api.spi.RuntimeHandle;
import dev.paddock.api.spi.RuntimeState;
import dev.paddock.api.spi.SandboxBackend;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** A new backend instance on the same data directory stands in for a restarted control plane. */
class RestartAdoptionTest {
  @RegisterExtension final SandboxFixture fixture = new SandboxFixture();

  @Test
  void newBackendListsInspectsPausesAndDestroysSandboxesOfTheOldOne() {
    SandboxBackend before = fixture.backend();
    RuntimeHandle first = before.start(fixture.request(fixture.newId()));
    RuntimeHandle second = before.start(fixture.request(fixture.newId()));

    SandboxBackend after = fixture.backend();
    List<RuntimeHandle> adopted = after.list();

    assertThat(adopted).containsExactlyInAnyOrder(first, second);
    for (RuntimeHandle handle : adopted) {
      assertThat(after.inspect(handle).status()).isEqualTo(SandboxStatus.RUNNING);
    }
    after.pause(first);
    assertThat(after.inspect(first).status()).isEqualTo(SandboxStatus.PAUSED);
    for (RuntimeHandle handle : adopted) {
      after.destroy(handle);
    }
    assertThat(after.list()).isEmpty();
    assertThat(before.list()).isEmpty();
  }

  @Test
  void markerOfAReusedPidIsNeitherListedNorAlive() throws Exception {
    SandboxBackend backend = fixture.backend();
    String id = fixture.newId();
    Path dir = fixture.sandboxDir(id);
    Files.createDirectories(dir);
    // This JVM's pid is alive, but it did not start at the recorded time: a reused pid.
    long pid = ProcessHandle.current().pid();
    long startTime = ProcFs.system().stat(pid).orElseThrow().startTime();
    Marker stale =
        new Marker(
            id,
            pid,
            startTime + 1,
            40000,
            SignalFreezer.KIND,
            Optional.empty(),
            Instant.now(),
            java.util.List.of(),
            java.util.List.of(),
            Optional.empty());
    stale.write(dir.resolve("paddock.json"));

    assertThat(backend.list()).isEmpty();
    RuntimeHandle handle = stale.toHandle("process");
    assertThat(backend.inspect(handle)).isEqualTo(RuntimeState.missing());

    backend.destroy(handle);

    assertThat(ProcessHandle.current().isAlive()).isTrue();
    assertThat(dir).doesNotExist();
  }
}
