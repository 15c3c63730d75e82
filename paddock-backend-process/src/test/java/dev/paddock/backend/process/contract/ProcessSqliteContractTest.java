package dev.paddock.backend.process.contract;

import dev.paddock.store.TestDatabase;

/** The contract suite: process backend, SQLite store (the embedded default). */
class ProcessSqliteContractTest extends ProcessContractBase {
  @Override
  TestDatabase database() {
    return TestDatabase.sqlite();
  }
}
