-- Several control-plane replicas on one database (issue 14).
-- replicas: each running control plane's heartbeat; a replica whose expires_at passed is gone.
-- leases: named leases for background work (reconcile, lifetimes, take-overs), one holder at a
-- time until expires_at; the holder renews it while it lives.
-- sandboxes.operation / operation_replica: the change under way (start, resume, pause, delete)
-- and the replica doing it, so another replica finishes or undoes it when that one is gone.
-- Times are epoch milliseconds.

CREATE TABLE replicas (
  id         TEXT   NOT NULL PRIMARY KEY,
  started_at BIGINT NOT NULL,
  expires_at BIGINT NOT NULL
);

CREATE TABLE leases (
  name       TEXT   NOT NULL PRIMARY KEY,
  holder     TEXT   NOT NULL,
  expires_at BIGINT NOT NULL
);

ALTER TABLE sandboxes ADD COLUMN operation TEXT;
ALTER TABLE sandboxes ADD COLUMN operation_replica TEXT;
