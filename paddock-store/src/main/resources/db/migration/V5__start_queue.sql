-- The start queue (same SQL on SQLite and PostgreSQL): one row per create waiting for a slot,
-- beside its QUEUED row in sandboxes. holder names the control-plane instance whose request is
-- waiting; it renews lease_until while it waits, so a row whose lease ran out belongs to a request
-- that is gone (its control plane restarted or crashed) and any replica fails it clearly.
-- turn: the round-robin round the create joined in (admission order is turn, then enqueued_at).
CREATE TABLE start_queue (
  sandbox_id  TEXT   NOT NULL PRIMARY KEY,
  owner       TEXT   NOT NULL,
  turn        BIGINT NOT NULL,
  enqueued_at BIGINT NOT NULL,
  deadline    BIGINT NOT NULL,
  holder      TEXT   NOT NULL,
  lease_until BIGINT NOT NULL
);
CREATE INDEX start_queue_order ON start_queue (turn, enqueued_at, sandbox_id);
