-- What a sandbox was created with (issue 9): image, labels, effective resources and working dir,
-- its lifetime (timeout, idle timeout, what to do then), its last activity, and the generation
-- its session key is derived for. Times are epoch milliseconds, durations milliseconds.
-- labels and resources are JSON objects for reading; sandbox_labels holds the same labels one per
-- row so that label selectors are answered by an index in both databases.

ALTER TABLE sandboxes ADD COLUMN image TEXT;
ALTER TABLE sandboxes ADD COLUMN labels TEXT;
ALTER TABLE sandboxes ADD COLUMN resources TEXT;
ALTER TABLE sandboxes ADD COLUMN working_dir TEXT;
ALTER TABLE sandboxes ADD COLUMN timeout_ms BIGINT;
ALTER TABLE sandboxes ADD COLUMN idle_timeout_ms BIGINT;
ALTER TABLE sandboxes ADD COLUMN on_timeout TEXT NOT NULL DEFAULT 'delete';
ALTER TABLE sandboxes ADD COLUMN on_idle TEXT NOT NULL DEFAULT 'pause';
ALTER TABLE sandboxes ADD COLUMN timeout_at BIGINT;
ALTER TABLE sandboxes ADD COLUMN last_activity_at BIGINT;
ALTER TABLE sandboxes ADD COLUMN key_generation BIGINT NOT NULL DEFAULT 0;
CREATE INDEX sandboxes_spec_newest ON sandboxes (spec_id, created_at DESC, id DESC);
CREATE INDEX sandboxes_timeout_at ON sandboxes (timeout_at);

CREATE TABLE sandbox_labels (
  sandbox_id TEXT NOT NULL,
  name       TEXT NOT NULL,
  value      TEXT NOT NULL,
  PRIMARY KEY (sandbox_id, name)
);
CREATE INDEX sandbox_labels_selector ON sandbox_labels (name, value, sandbox_id);
