-- Atlas after the launch (issue 18): a failing scan or classification backs off
-- (`retry_at`, 1, 2, 4 … 60 minutes) for up to a day (`failing_since`) before the message
-- parks — `scan_failed` for scanner errors, never `blocked`, which stays for an infected
-- attachment only; a timed-out launch is retried at most ATLAS_MAX_RETRIES times
-- (`launch_retries`), then `escalated`. Each launch records its attempt and how its
-- Claude Code session was handled (`session_mode`).
--
-- atlas_emails is rebuilt for its CHECK, as in 0007 (foreign keys deferred to the commit).
PRAGMA defer_foreign_keys = ON;

CREATE TABLE atlas_emails_0007 AS SELECT * FROM atlas_emails;
DROP TABLE atlas_emails;
CREATE TABLE atlas_emails (
    id                 INTEGER PRIMARY KEY,
    raw_message_id     INTEGER NOT NULL UNIQUE REFERENCES atlas_raw_messages(id),
    status             TEXT NOT NULL CHECK (status IN
                         ('received', 'scanned', 'blocked', 'classified', 'classify_failed',
                          'spawned', 'actioned', 'failed', 'awaiting_approval', 'cancelled',
                          'scan_failed', 'escalated')),
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
    approved_at        TEXT,
    -- The next attempt of a failing scan or classification is not before this.
    retry_at           TEXT,
    -- The first failure of the current run of failures (cleared by a success).
    failing_since      TEXT,
    -- Launches that timed out and were retried.
    launch_retries     INTEGER NOT NULL DEFAULT 0 CHECK (launch_retries >= 0)
);
INSERT INTO atlas_emails
    (id, raw_message_id, status, scan_verdict, scanned_parts, attachment_count, attempts, client_id,
     client_source, is_forward, intent, complexity, confidence, model, justification, classified_at,
     chantier_id, run_id, question_id, negociation_id, conseil_id, created_at, updated_at, approved_at)
SELECT id, raw_message_id,
     -- Parked by scanner errors (no verdict) is not blocked by an infection.
     CASE WHEN status = 'blocked' AND scan_verdict IS NULL THEN 'scan_failed' ELSE status END,
     scan_verdict, scanned_parts, attachment_count, attempts, client_id,
     client_source, is_forward, intent, complexity, confidence, model, justification, classified_at,
     chantier_id, run_id, question_id, negociation_id, conseil_id, created_at, updated_at, approved_at
FROM atlas_emails_0007;
DROP TABLE atlas_emails_0007;
CREATE INDEX atlas_emails_status ON atlas_emails(status);

ALTER TABLE atlas_launches ADD COLUMN attempt INTEGER NOT NULL DEFAULT 1;
ALTER TABLE atlas_launches ADD COLUMN session_mode TEXT CHECK (session_mode IN
    ('not_saved', 'saved', 'resumed', 'fresh_after_refused_resume'));
