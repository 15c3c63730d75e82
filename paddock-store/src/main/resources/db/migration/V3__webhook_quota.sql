-- Webhook tenancy and quotas (same SQL on SQLite and PostgreSQL).
-- conversation_claims: the sandbox (and its owner at the time) that first posted to a conversation
-- id owns it; nobody else may write to it. It also keeps the running totals the quota checks read,
-- so an append never has to scan the conversation's events.
-- webhook_events.byte_count: each event's size in UTF-8 bytes, so retention can drop the oldest.

CREATE TABLE conversation_claims (
  conversation_id TEXT   NOT NULL PRIMARY KEY,
  sandbox_id      TEXT   NOT NULL,
  owner           TEXT   NOT NULL,
  event_count     BIGINT NOT NULL,
  event_bytes     BIGINT NOT NULL,
  claimed_at      BIGINT NOT NULL
);
CREATE INDEX conversation_claims_sandbox ON conversation_claims (sandbox_id, owner);

ALTER TABLE webhook_events ADD COLUMN byte_count BIGINT NOT NULL DEFAULT 0;
-- Existing rows: characters, a close enough stand-in for bytes.
UPDATE webhook_events SET byte_count = length(json);

-- Existing data: a conversation document's sandbox claims it, else the sandbox of its first event.
INSERT INTO conversation_claims (conversation_id, sandbox_id, owner, event_count, event_bytes,
    claimed_at)
  SELECT c.id, c.sandbox_id, COALESCE(s.owner, ''), 0, 0, c.updated_at
  FROM conversations c LEFT JOIN sandboxes s ON s.id = c.sandbox_id;
INSERT INTO conversation_claims (conversation_id, sandbox_id, owner, event_count, event_bytes,
    claimed_at)
  SELECT e.conversation_id, e.sandbox_id, COALESCE(s.owner, ''), 0, 0, e.received_at
  FROM webhook_events e LEFT JOIN sandboxes s ON s.id = e.sandbox_id
  WHERE e.sequence = (SELECT MIN(f.sequence) FROM webhook_events f
                      WHERE f.conversation_id = e.conversation_id)
    AND NOT EXISTS (SELECT 1 FROM conversation_claims k
                    WHERE k.conversation_id = e.conversation_id);
UPDATE conversation_claims SET
  event_count = (SELECT COUNT(*) FROM webhook_events e
                 WHERE e.conversation_id = conversation_claims.conversation_id),
  event_bytes = (SELECT COALESCE(SUM(e.byte_count), 0) FROM webhook_events e
                 WHERE e.conversation_id = conversation_claims.conversation_id);
