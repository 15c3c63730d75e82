package dev.paddock.backend.process.contract;

import dev.paddock.api.ArchiveStore;
import dev.paddock.controlplane.ArchiveStores;
import dev.paddock.store.TestDatabase;
import java.util.Optional;

/**
 * The contract suite: process backend, PostgreSQL store (a real server, started by {@code .ci/run};
 * skipped with a message when {@code PADDOCK_TEST_POSTGRES_URL} is unset, failed on CI), with
 * archive-before-delete on (required, into a directory store under the test's data directory):
 * every delete of a RUNNING sandbox archives its workspace first, so the contract is shown to hold
 * with archiving on without a third run of the whole suite.
 */
class ProcessPostgresContractTest extends ProcessContractBase {
  private final ArchiveStore archives = ArchiveStores.directory(dataDir().resolve("archives"));

  @Override
  TestDatabase database() {
    return TestDatabase.postgres();
  }

  @Override
  protected Optional<ArchiveStore> archiveStore() {
    return Optional.of(archives);
  }
}
