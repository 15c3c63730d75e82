package dev.paddock.controlplane.inprocess;

import dev.paddock.store.SandboxStore;
import dev.paddock.store.SandboxStores;
import dev.paddock.store.TestDatabase;
import java.nio.file.Path;

/**
 * The whole service contract, and {@link InProcessContractTest}'s own tests, on PostgreSQL: a real
 * server (started by {@code .ci/run}; skipped with a message when {@code PADDOCK_TEST_POSTGRES_URL}
 * is unset, failed on CI), a new schema per test, dropped after it. The store is what differs from
 * the SQLite run; the in-JVM agents keep it to the store's part (the process backend runs the
 * contract on SQLite, and {@code paddock-cli}'s two-replica tests run real processes on
 * PostgreSQL).
 */
class InProcessPostgresContractTest extends InProcessContractTest {
  private TestDatabase database;

  InProcessPostgresContractTest() throws java.io.IOException {}

  @Override
  SandboxStore openStore(Path dataDir) {
    if (database == null) {
      database = TestDatabase.postgres();
    }
    return SandboxStores.open(database.url(), database.user(), database.password());
  }

  @Override
  void closeStore() {
    if (database != null) {
      database.close();
    }
  }
}
