-- Paddock's first schema, PostgreSQL flavour. Differs from the SQLite one only where the two
-- databases do: the event sequence (an identity column) and the sandbox id's collation ("C",
-- byte-wise, so newest-first pages order ties by id the same way on both databases).
-- Times are epoch milliseconds; JSON documents are TEXT.

CREATE TABLE sandboxes (
  id                 TEXT COLLATE "C" NOT NULL PRIMARY KEY,
  owner              TEXT,
  spec_id            TEXT    NOT NULL,
  status             TEXT    NOT NULL,
  session_key_hash   TEXT,
  runtime_backend    TEXT,
  runtime_attributes TEXT,
  status_detail      TEXT,
  created_at         BIGINT  NOT NULL,
  updated_at         BIGINT  NOT NULL,
  version            BIGINT  NOT NULL
);
CREATE UNIQUE INDEX sandboxes_session_key_hash ON sandboxes (session_key_hash);
CREATE INDEX sandboxes_newest ON sandboxes (created_at DESC, id DESC);
CREATE INDEX sandboxes_owner_newest ON sandboxes (owner, created_at DESC, id DESC);
CREATE INDEX sandboxes_status ON sandboxes (status);

CREATE TABLE users (
  id         TEXT    NOT NULL PRIMARY KEY,
  name       TEXT    NOT NULL UNIQUE,
  admin      BOOLEAN NOT NULL,
  created_at BIGINT  NOT NULL
);

CREATE TABLE api_keys (
  id         TEXT   NOT NULL PRIMARY KEY,
  user_id    TEXT   NOT NULL REFERENCES users (id),
  key_hash   TEXT   NOT NULL UNIQUE,
  label      TEXT   NOT NULL,
  created_at BIGINT NOT NULL,
  revoked_at BIGINT
);
CREATE INDEX api_keys_user ON api_keys (user_id);

CREATE TABLE webhook_events (
  sequence        BIGINT  GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  sandbox_id      TEXT    NOT NULL,
  conversation_id TEXT    NOT NULL,
  json            TEXT    NOT NULL,
  received_at     BIGINT  NOT NULL
);
CREATE INDEX webhook_events_conversation ON webhook_events (conversation_id, sequence);

CREATE TABLE conversations (
  id         TEXT   NOT NULL PRIMARY KEY,
  sandbox_id TEXT   NOT NULL,
  json       TEXT   NOT NULL,
  updated_at BIGINT NOT NULL
);
CREATE INDEX conversations_sandbox ON conversations (sandbox_id);
