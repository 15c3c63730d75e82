-- Gateway settings of a sandbox (issue 12; same SQL on SQLite and PostgreSQL).
-- auto_resume: 1 when gateway traffic that may wake a paused sandbox (a signed URL, a public
-- port) resumes it instead of being answered 409.
-- public_ports: a JSON array of the ports its owner opened to anyone through the gateway.

ALTER TABLE sandboxes ADD COLUMN auto_resume BIGINT NOT NULL DEFAULT 0;
ALTER TABLE sandboxes ADD COLUMN public_ports TEXT;
