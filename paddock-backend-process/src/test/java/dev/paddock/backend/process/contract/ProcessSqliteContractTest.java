package dev.paddock.backend.process.contract;

import dev.paddock.api.ArchiveStore;
import dev.paddock.controlplane.ArchiveStores;
import dev.paddock.store.TestDatabase;
import java.util.Optional;

/**
 * The contract suite: process backend, SQLite store (the embedded default), with archive-before-
 * delete on (required, into a directory store under the test's data directory): every delete of a
 * RUNNING sandbox archives its workspace first, so the contract is shown to hold with archiving on
 * without another run of the whole suite. The contract on PostgreSQL runs in the control plane's
 * module ({@code InProcessPostgresContractTest}).
 */
class ProcessSqliteContractTest extends ProcessContractBase {
  private final ArchiveStore archives = ArchiveStores.directory(dataDir().resolve("archives"));

  @Override
  TestDatabase database() {
    return TestDatabase.sqlite();
  }

  @Override
  protected Optional<ArchiveStore> archiveStore() {
    return Optional.of(archives);
  }
}
