package dev.paddock.store;

import java.util.List;

/**
 * The contract on PostgreSQL: each test in a new schema of the database named by {@code
 * PADDOCK_TEST_POSTGRES_URL}; skipped when it is unset (never on CI, where .ci/run sets it).
 */
class PostgresStoreTest extends SandboxStoreContract {
  @Override
  protected TestDatabase createDatabase() {
    return TestDatabase.postgres();
  }

  @Override
  protected List<String> rejectEventSql(String poison) {
    return List.of(
        "CREATE FUNCTION reject_poison() RETURNS trigger LANGUAGE plpgsql AS"
            + " 'BEGIN IF NEW.json = ''"
            + poison
            + "'' THEN RAISE EXCEPTION ''poisoned event''; END IF; RETURN NEW; END'",
        "CREATE TRIGGER reject_poison BEFORE INSERT ON webhook_events"
            + " FOR EACH ROW EXECUTE FUNCTION reject_poison()");
  }
}
