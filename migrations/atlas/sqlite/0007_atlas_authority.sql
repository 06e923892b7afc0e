-- Atlas launch authority (issue 17): a message whose author is not verified waits in
-- `awaiting_approval` until the founder approves it (`approved_at`) or refuses it
-- (`cancelled`); a client's record may allow launches (`auto_launch`, off by default); the
-- e-mails Atlas sends the founder besides recaps are kept once per event (`atlas_notices`).
--
-- SQLite cannot change a CHECK in place: atlas_emails is rebuilt. Foreign keys stay on
-- (a migration runs in one transaction, where `PRAGMA foreign_keys` cannot change), so
-- their checks are deferred to the commit: dropping the old table orphans the audits,
-- launches… for a moment, re-inserting every row resolves each of them, and the commit
-- fails (nothing changes) if a single one were left.
PRAGMA defer_foreign_keys = ON;

CREATE TABLE atlas_emails_0006 AS SELECT * FROM atlas_emails;
DROP TABLE atlas_emails;
CREATE TABLE atlas_emails (
    id                 INTEGER PRIMARY KEY,
    raw_message_id     INTEGER NOT NULL UNIQUE REFERENCES atlas_raw_messages(id),
    status             TEXT NOT NULL CHECK (status IN
                         ('received', 'scanned', 'blocked', 'classified', 'classify_failed',
                          'spawned', 'actioned', 'failed', 'awaiting_approval', 'cancelled')),
    scan_verdict       TEXT CHECK (scan_verdict IN ('clean', 'infected', 'error')),
    scanned_parts      INTEGER,
    attachment_count   INTEGER,
    attempts           INTEGER NOT NULL DEFAULT 0,
    client_id          INTEGER REFERENCES atlas_clients(id),
    client_source      TEXT CHECK (client_source IN ('envelope', 'forwarded-body', 'unknown')),
    is_forward         INTEGER CHECK (is_forward IN (0, 1)),
    intent             TEXT CHECK (intent IN ('run', 'question', 'noise', 'negociation', 'conseil')),
    complexity         TEXT CHECK (complexity IN ('leger', 'plan')),
    confidence         REAL CHECK (confidence >= 0 AND confidence <= 1),
    model              TEXT,
    justification      TEXT,
    classified_at      TEXT,
    chantier_id        INTEGER REFERENCES atlas_chantiers(id),
    run_id             INTEGER,
    question_id        INTEGER,
    negociation_id     INTEGER,
    conseil_id         INTEGER,
    created_at         TEXT NOT NULL,
    updated_at         TEXT NOT NULL,
    -- When the founder approved the launch of a message held for an unverified author.
    approved_at        TEXT
);
INSERT INTO atlas_emails
    (id, raw_message_id, status, scan_verdict, scanned_parts, attachment_count, attempts, client_id,
     client_source, is_forward, intent, complexity, confidence, model, justification, classified_at,
     chantier_id, run_id, question_id, negociation_id, conseil_id, created_at, updated_at)
SELECT id, raw_message_id, status, scan_verdict, scanned_parts, attachment_count, attempts, client_id,
     client_source, is_forward, intent, complexity, confidence, model, justification, classified_at,
     chantier_id, run_id, question_id, negociation_id, conseil_id, created_at, updated_at
FROM atlas_emails_0006;
DROP TABLE atlas_emails_0006;
CREATE INDEX atlas_emails_status ON atlas_emails(status);

-- A client whose e-mails may start Claude Code without the founder's approval (their
-- DKIM-verified envelope only).
ALTER TABLE atlas_clients ADD COLUMN auto_launch INTEGER NOT NULL DEFAULT 0 CHECK (auto_launch IN (0, 1));

-- One row per e-mail to the founder that must go out once (an approval request, a parked
-- message, an escalation, a lock alert): the unique key makes a second worker, a replay or
-- a retry a no-op; unsent ones are retried (`attempts`, `last_try_at`, `last_error`).
CREATE TABLE atlas_notices (
    id           INTEGER PRIMARY KEY,
    email_id     INTEGER REFERENCES atlas_emails(id),
    kind         TEXT NOT NULL,
    dedupe_key   TEXT NOT NULL UNIQUE,
    subject      TEXT NOT NULL,
    body         TEXT NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    last_try_at  TEXT,
    last_error   TEXT,
    sent_at      TEXT,
    created_at   TEXT NOT NULL
);
CREATE INDEX atlas_notices_unsent ON atlas_notices(sent_at, created_at);
