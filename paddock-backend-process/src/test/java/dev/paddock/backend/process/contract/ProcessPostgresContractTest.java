package dev.paddock.backend.process.contract;

import dev.paddock.store.TestDatabase;

/**
 * The contract suite: process backend, PostgreSQL store (a real server, started by {@code .ci/run};
 * skipped with a message when {@code PADDOCK_TEST_POSTGRES_URL} is unset, failed on CI).
 */
class ProcessPostgresContractTest extends ProcessContractBase {
  @Override
  TestDatabase database() {
    return TestDatabase.postgres();
  }
}
