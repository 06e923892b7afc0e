-- Atlas launch authority (issue 17): a message whose author is not verified waits in
-- `awaiting_approval` until the founder approves it (`approved_at`) or refuses it
-- (`cancelled`); a client's record may allow launches (`auto_launch`, off by default); the
-- e-mails Atlas sends the founder besides recaps are kept once per event (`atlas_notices`).

ALTER TABLE atlas_emails DROP CONSTRAINT atlas_emails_status_check;
ALTER TABLE atlas_emails ADD CONSTRAINT atlas_emails_status_check CHECK (status IN
    ('received', 'scanned', 'blocked', 'classified', 'classify_failed',
     'spawned', 'actioned', 'failed', 'awaiting_approval', 'cancelled'));
-- When the founder approved the launch of a message held for an unverified author.
ALTER TABLE atlas_emails ADD COLUMN approved_at TEXT COLLATE "C";

-- A client whose e-mails may start Claude Code without the founder's approval (their
-- DKIM-verified envelope only).
ALTER TABLE atlas_clients ADD COLUMN auto_launch BIGINT NOT NULL DEFAULT 0 CHECK (auto_launch IN (0, 1));

-- One row per e-mail to the founder that must go out once (an approval request, a parked
-- message, an escalation, a lock alert): the unique key makes a second worker, a replay or
-- a retry a no-op; unsent ones are retried (`attempts`, `last_try_at`, `last_error`).
CREATE TABLE atlas_notices (
    id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email_id     BIGINT REFERENCES atlas_emails(id),
    kind         TEXT NOT NULL,
    dedupe_key   TEXT NOT NULL UNIQUE,
    subject      TEXT NOT NULL,
    body         TEXT NOT NULL,
    attempts     BIGINT NOT NULL DEFAULT 0,
    last_try_at  TEXT COLLATE "C",
    last_error   TEXT,
    sent_at      TEXT COLLATE "C",
    created_at   TEXT COLLATE "C" NOT NULL
);
CREATE INDEX atlas_notices_unsent ON atlas_notices(sent_at, created_at);
