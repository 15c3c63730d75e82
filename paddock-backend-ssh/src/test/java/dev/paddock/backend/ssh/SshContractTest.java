package dev.paddock.backend.ssh;

import dev.paddock.api.SandboxSpec;
import dev.paddock.api.spi.SandboxBackend;
import dev.paddock.controlplane.SandboxServiceContract;
import dev.paddock.store.SandboxStore;
import dev.paddock.store.SandboxStores;
import dev.paddock.store.TestDatabase;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * The shared contract suite with the SSH backend against a real sshd on loopback (the agent's
 * runtime bundle copied to the host, the agent reached through a port forward) and the SQLite
 * store. Fails when a test leaves a sandbox directory, process, cgroup or ssh client behind.
 */
class SshContractTest extends SandboxServiceContract {
  private static TestSshd sshd;
  private TestDatabase database;
  private HostLeaks leaks;

  @BeforeAll
  static void startSshd() {
    sshd = TestSshd.start();
  }

  @AfterAll
  static void stopSshd() {
    if (sshd != null) {
      sshd.close();
    }
  }

  @Override
  protected SandboxBackend newBackend() {
    if (leaks == null) {
      leaks = new HostLeaks(sshd.remoteDir());
    }
    return new SshBackendProvider().create(sshd.settings(Map.of()));
  }

  @Override
  protected SandboxStore newStore() {
    database = TestDatabase.sqlite();
    return SandboxStores.open(database.url(), database.user(), database.password());
  }

  @Override
  protected SandboxSpec runnableSpec() {
    return SandboxSpec.builder("ssh-default").build();
  }

  @Override
  protected SandboxSpec failingSpec() {
    return SandboxSpec.builder("exits-3")
        .command(List.of("bash", "-c", "echo 'secret detail: /srv/x' >&2; exit 3"))
        .build();
  }

  @Override
  protected void assertNothingLeaked() throws Exception {
    try {
      leaks.assertNone();
    } finally {
      if (database != null) {
        database.close();
      }
    }
  }
}
